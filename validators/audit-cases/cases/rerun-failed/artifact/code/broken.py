raise SystemExit('this experiment cannot run')
