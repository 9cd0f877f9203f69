"""Examples of the codes that manifest validation does not report (spec §12, codes.md).

The environment check (E, including the SDK's own extras and configuration: E015, E016), data
(D), audit (A) and runner (N) codes, and L010 and L011, are reported
by commands that look at more than the artifact's files: an interpreter, the network, run
directories, a command line. Their catalogue entries show what triggers each code and a close
case that does not, as short snippets (a manifest excerpt, an evidence record excerpt or a
command). The tests of the SDK (``tests/env``, ``tests/run``, ``tests/audit``) exercise each
code on real environments, servers and runs.

Each entry is ``(language, reported, not_reported)``; ``language`` is the fence's info string.
"""

from __future__ import annotations

__all__ = ["RUNTIME_EXAMPLES"]

_SH = "sh"
_YAML = "yaml"
_JSON = "jsonc"

RUNTIME_EXAMPLES: dict[str, tuple[str, str, str]] = {
    # ------------------------------------------------------------------- V: versioning
    "V006": (
        _SH,
        "# rra.yaml declares rra_version '1.1'\n"
        "$ reprobridge upgrade --to 1.0   # V006 at /rra_version: never a downgrade, exit 1",
        "# rra.yaml declares rra_version '1.0'\n"
        "$ reprobridge upgrade --to 1.1   # rra_version becomes '1.1'; comments are kept",
    ),
    "V008": (
        _SH,
        "# rra.yaml declares rra_version '1.9' and a key this version does not know\n"
        "$ reprobridge digest --update   # V008 at that key: a rewrite would lose it, exit 2",
        "# rra.yaml declares a version this SDK knows (or 1.9, read whole)\n"
        "$ reprobridge digest --update   # a minimal diff; comments and extension keys kept",
    ),
    # ------------------------------------------------------------------- L: locks
    "L010": (
        _SH,
        "# environment/requirements.in asks for a version no index has\n"
        "$ cat environment/requirements.in\n"
        "numpy==0.0.1\n"
        "$ reprobridge lock            # L010 (file environment/requirements.in), exit 1",
        "# every requirement has a solution on the index\n"
        "$ cat environment/requirements.in\n"
        "numpy>=1.26,<2\n"
        "$ reprobridge lock            # writes the hashed lock and records its sha256",
    ),
    "L011": (
        _SH,
        "# rra.yaml declares environment.python: '3' (not a major.minor version)\n"
        "$ reprobridge lock            # L011 at /environment/python, exit 2\n"
        "$ reprobridge lock --lock-format pylock --output locks.toml   # L011: not a pylock name",
        "# rra.yaml declares environment.python: '3.11' and requirements: requirements.in\n"
        "$ reprobridge lock --lock-format pylock   # writes pylock.toml",
    ),
    "L013": (
        _SH,
        "# environment/requirements.in: torch==2.5.1 and nvidia-cublas-cu12==12.4.5.8\n"
        "$ reprobridge lock --accelerator cpu   # L013 (a warning): the nvidia pin is left out",
        "# environment/requirements.in: torch==2.5.1\n"
        "$ reprobridge lock --accelerator cpu   # torch==2.5.1+cpu, nothing left out",
    ),
    "L014": (
        _SH,
        "# environment/requirements.in: torch==2.5.1; no GPU; the CPU index does not answer\n"
        "$ reprobridge lock        # L014 (a warning): torch==2.5.1 (CUDA), accelerator: cuda",
        "# the same, where the CPU builds' index answers\n"
        "$ reprobridge lock        # torch==2.5.1+cpu, accelerator: cpu",
    ),
    # ------------------------------------------------------------------- F: files (limits)
    "F010": (
        _SH,
        "$ truncate -s 4G environment/requirements.lock    # sparse: no disk space used\n"
        "$ reprobridge validate     # F010 at /environment/lock/sha256 (and L003), unread",
        "# a lock of a few kilobytes, or any file under its limit (spec: security.md#file-layer)\n"
        "$ reprobridge validate",
    ),
    "F011": (
        _SH,
        "# checking the artifact ran out of recursion depth or memory\n"
        "$ reprobridge validate submissions/   # F011 for that artifact; the others are checked",
        "# JSON evidence nested 256 levels or less, YAML evidence 64 or less\n"
        "$ reprobridge validate submissions/",
    ),
    "F012": (
        _SH,
        "# a run's log.txt on a file system that delivers a few bytes a second\n"
        "$ reprobridge audit      # F012 at /log/path: not hashed within safefs.HASH_SECONDS",
        "# evidence on a disk that reads a 64 GiB output within the deadline\n$ reprobridge audit",
    ),
    # ------------------------------------------------------------------- E: environment
    "E001": (
        _SH,
        "# the lock pins numpy==1.26.4 (with hashes); the interpreter lacks it\n"
        "$ pip uninstall -y numpy\n"
        "$ reprobridge env check --current\n"
        "# E001 at environment/requirements.lock:<line of the pin>, path /distributions/numpy",
        "# a pin whose marker does not apply to the interpreter is not checked\n"
        'numpy==1.26.4 ; python_version < "3.10" --hash=sha256:...   # on Python 3.11: skipped',
    ),
    "E002": (
        _SH,
        "# the lock pins numpy==1.26.4; the interpreter has 2.0.1\n"
        "$ reprobridge env check --current    # E002, path /distributions/numpy",
        "# versions are compared as versions (PEP 440), not as strings\n"
        "# the lock pins foo==1.2, the interpreter has foo 1.2.0: no finding",
    ),
    "E003": (
        _SH,
        "# requests 2.32.3 is installed but not in the lock\n"
        "$ reprobridge env check --current -v   # E003 (info), path /distributions/requests",
        "# pip, setuptools, wheel and distribute are installed by venv itself: never reported\n"
        "$ reprobridge env check             # (info findings are shown only with -v)",
    ),
    "E004": (
        _YAML,
        "environment:\n"
        '  python: "3.11"        # the interpreter checked is Python 3.12.1: E004\n'
        "                        # (env create: E004 when no python3.11 can be found)",
        "environment:\n"
        '  python: "3.11"        # Python 3.11.9 satisfies "3.11" (a release prefix);\n'
        '                        # "3.11.7" would not be satisfied by 3.11.9',
    ),
    "E005": (
        _YAML,
        "environment:\n"
        "  system_packages:\n"
        "    - name: graphviz\n"
        "      command: dot      # 'dot' is not on PATH: E005 at .../0/command",
        "environment:\n"
        "  system_packages:\n"
        "    - name: graphviz\n"
        "      command: dot      # 'dot' is on PATH (the package manager is not asked)",
    ),
    "E006": (
        _YAML,
        "environment:\n"
        "  system_packages:\n"
        "    - name: libsndfile1 # no command; dpkg-query says it is not installed: E006",
        "environment:\n"
        "  system_packages:\n"
        "    - name: libsndfile1 # installed per dpkg-query; on a system without dpkg-query\n"
        "                        # a package without a command is not checked",
    ),
    "E007": (
        _YAML,
        "environment:\n"
        "  accelerator:\n"
        "    kind: cuda          # nvidia-smi is missing or lists no GPU: E007\n"
        "    gpus: 1",
        "environment:\n"
        "  accelerator:\n"
        "    kind: none          # the default: no accelerator check at all",
    ),
    "E008": (
        _YAML,
        "environment:\n"
        "  accelerator:\n"
        "    kind: cuda\n"
        "    gpus: 4             # nvidia-smi lists 2 GPUs: E008 at .../accelerator/gpus",
        "environment:\n"
        "  accelerator:\n"
        "    kind: cuda\n"
        "    gpus: 2             # 2 or more GPUs visible",
    ),
    "E009": (
        _YAML,
        "environment:\n"
        "  accelerator:\n"
        "    kind: cuda\n"
        '    cuda: "12.1"        # nvcc (else the driver) reports 11.8, or no version: E009',
        "environment:\n"
        "  accelerator:\n"
        "    kind: cuda\n"
        '    cuda: "12.1"        # nvcc reports 12.4: a newer CUDA satisfies the need',
    ),
    "E010": (
        _YAML,
        "environment:\n"
        "  accelerator:\n"
        "    kind: cuda\n"
        "    gpu_memory_gb: 40   # a GPU with 24576 MB (24 GB): E010 (a warning)",
        "environment:\n"
        "  accelerator:\n"
        "    kind: cuda\n"
        "    gpu_memory_gb: 40   # every GPU has at least 40 * 1024 MB",
    ),
    "E011": (
        _SH,
        "# no environment has been built from this lock for this Python\n"
        "$ reprobridge env check      # E011 at /environment/lock",
        "$ reprobridge env create     # builds (or reuses) the cached environment\n"
        "$ reprobridge env check      # checks it: no E011\n"
        "$ reprobridge env check --current   # checks the running interpreter instead",
    ),
    "E012": (
        _YAML,
        "environment:\n"
        '  python: "3.11"\n'
        "  # no lock: E012 at /environment (env create, env check)\n"
        "  # or lock.path names a file that does not exist: E012 at /environment/lock/path",
        "environment:\n"
        '  python: "3.11"\n'
        "  lock:\n"
        "    path: environment/requirements.lock   # exists",
    ),
    "E013": (
        _SH,
        "# a --hash in the lock does not match the wheel the index serves\n"
        "$ reprobridge env create     # E013 (file environment/requirements.lock), exit 1\n"
        "$ reprobridge run            # each run fails: environment-error naming E013",
        "# every pinned file downloads and matches one of its hashes\n"
        "$ reprobridge env create     # the environment is built once and cached by lock digest",
    ),
    "E014": (
        _SH,
        "# the lock was edited by hand after 'reprobridge lock' recorded its sha256\n"
        "$ reprobridge env create     # E014 at /environment/lock/sha256; nothing is built",
        "$ reprobridge lock           # re-resolves and records the lock's new digest\n"
        "$ reprobridge env create     # the digests agree",
    ),
    "E015": (
        _SH,
        "# reprobridge was installed without the pip-tools extra\n"
        "$ reprobridge lock --resolver pip-tools\n"
        "# E015 at /extras/pip-tools, hint: pip install 'reprobridge[pip-tools]'; exit 2",
        "$ pip install 'reprobridge[pip-tools]'\n"
        "$ reprobridge lock --resolver pip-tools     # resolves with pip-compile",
    ),
    "E016": (
        _SH,
        "# pyproject.toml misspells a setting of [tool.reprobridge]\n"
        "$ cat pyproject.toml\n"
        "[tool.reprobridge]\n"
        'ignores = ["R010"]\n'
        "$ reprobridge validate demo   # E016 at pyproject.toml:2:1, hint: did you mean 'ignore'?",
        "[tool.reprobridge]\n"
        'ignore = ["R010"]             # a known key with a list of code prefixes: no finding',
    ),
    "E017": (
        _SH,
        "# an installed distribution declares a report format whose module fails to import\n"
        "$ reprobridge validate demo --format broken\n"
        "# E017 at /plugins/reprobridge.report_formats/broken; exit 2",
        "# a plugin that imports and exposes a callable renders the report\n"
        "$ reprobridge validate demo --format count     # the plugin's text on stdout",
    ),
    "E018": (
        _YAML,
        "artifact:\n"
        "  authors: []           # and no paper.authors: 'reprobridge export citation' gives E018\n"
        "  paper: {title: A study}",
        "artifact:\n"
        "  authors: [{name: Ada Lovelace}]   # CITATION.cff names her as the author\n"
        "  paper: {title: A study}",
    ),
    "E019": (
        _SH,
        "$ reprobridge references import-mlflow mlruns --experiment digitz --metric acc=knn\n"
        "# E019: the store has no experiment 'digitz'; exit 2",
        "$ reprobridge references import-mlflow mlruns --experiment digits --metric acc=knn\n"
        "# knn: added 5 observation(s)",
    ),
    "E020": (
        _SH,
        "$ REPROBRIDGE_INDEX_URL=https://127.0.0.1:9/simple reprobridge env create   # E020",
        "$ reprobridge env create   # the index answers",
    ),
    "E021": (
        _SH,
        "# the index presents a self-signed certificate the installer does not trust\n"
        "$ reprobridge run --scope smoke   # E021 in the run's failure detail and its log",
        "# a certificate from a trusted authority (or its CA bundle configured)\n"
        "$ reprobridge run --scope smoke",
    ),
    "E022": (
        _SH,
        "$ HTTPS_PROXY=http://127.0.0.1:9 reprobridge env create   # the proxy refuses: E022",
        "$ reprobridge env create   # no proxy, or one that answers",
    ),
    "E023": (
        _SH,
        "# the index answers 403 Forbidden for the pinned file\n"
        "$ reprobridge env create   # E023 with the installer's own message",
        "$ reprobridge env create   # the index serves the file",
    ),
    "E026": (
        _SH,
        "# an installed distribution declares report formats named 'json' and 'Bad_Name'\n"
        "$ reprobridge plugins     # E026 at /plugins/reprobridge.report_formats/json (ignored)",
        "# the entry point is named 'count' (lower case, not a built-in format)\n"
        "$ reprobridge plugins     # listed; 'validate --format count' uses it",
    ),
    # ------------------------------------------------------------------- X: extractor plugins
    "X006": (
        _SH,
        "# launchers[0].measurements[0].extract: {kind: x-tensorboard, x-tag: eval/acc}\n"
        "# the installed x-tensorboard plugin raises on the sample (or returns NaN, a string)\n"
        "$ reprobridge validate    # X006 at /launchers/0/measurements/0/extract/kind",
        "# the plugin returns a finite number for the sample\n$ reprobridge validate",
    ),
    "X007": (
        _SH,
        "# the installed x-tensorboard plugin does not return within its time limit (30 s)\n"
        "$ reprobridge validate    # X007 at /launchers/0/measurements/0/extract/kind",
        "# the plugin answers in time\n$ reprobridge validate",
    ),
    "X008": (
        _SH,
        "# an installed distribution declares extractor kinds named 'regex' and 'tensorboard'\n"
        "$ reprobridge plugins     # X008 at /plugins/reprobridge.extractors/regex (ignored)",
        "# the entry point is named 'x-tensorboard'\n"
        "$ reprobridge plugins     # listed; {kind: x-tensorboard} uses it",
    ),
    # ------------------------------------------------------------------- D: data
    "D001": (
        _YAML,
        "environment:\n"
        "  data:\n"
        "    - id: digits\n"
        "      source: {url: https://example.org/digits.npz}\n"
        "      destination: data/digits.npz   # not there: D001 (reprobridge data verify)",
        "# after 'reprobridge data fetch' the file is at data/digits.npz with the declared\n"
        "# size and sha256: 'reprobridge data verify' reports nothing",
    ),
    "D002": (
        _YAML,
        "    - id: digits\n"
        "      destination: data/digits.npz\n"
        "      sha256: 3f1c...e9   # the file (or the download) hashes to another value: D002\n"
        "                          # a download that does not match is deleted, not placed",
        "    - id: digits\n"
        "      destination: data/digits.npz\n"
        "      sha256: 3f1c...e9   # the file hashes to exactly this",
    ),
    "D003": (
        _YAML,
        "    - id: digits\n"
        "      destination: data/digits.npz\n"
        "      size: 1048576       # the file has 1048000 bytes: D003 (checked before sha256)",
        "    - id: digits\n"
        "      destination: data/digits.npz\n"
        "      # no size: only the sha256 is checked",
    ),
    "D004": (
        _YAML,
        "    - id: digits\n"
        "      source: {url: https://example.org/digits.npz}\n"
        "      destination: ../shared/digits.npz   # outside the artifact: D004, not written\n"
        "    - id: vocab\n"
        "      source: {codebase: ../../vocab.txt} # outside the refined code: D004",
        "    - id: digits\n"
        "      source: {url: https://example.org/digits.npz}\n"
        "      destination: data/digits.npz        # inside the artifact",
    ),
    "D005": (
        _SH,
        "# the server answers 404 (or 403...): D005 at once\n"
        "# connection errors, 408, 429 and 5xx: retried; D005 after 4 attempts\n"
        "$ reprobridge data fetch     # D005 at /environment/data/0/source/url, exit 1",
        "# the transfer breaks once; the next attempt resumes with a Range request\n"
        "$ reprobridge data fetch     # fetched and verified",
    ),
    "D006": (
        _YAML,
        "    - id: imagenet-val\n"
        "      access: gated       # data fetch downloads nothing: D006 with the instructions\n"
        "      instructions: Accept the licence at image-net.org, then place the archive.\n"
        "      destination: data/ILSVRC2012_img_val.tar",
        "# the user placed data/ILSVRC2012_img_val.tar and it matches size and sha256:\n"
        "# 'reprobridge data fetch' and 'data verify' report nothing for the item",
    ),
    "D007": (
        _YAML,
        "    - id: shards\n"
        "      source: {url: hf://acme/shards.tar}   # no owner/repo/path: D007\n"
        "      destination: data/shards.tar",
        "    - id: shards\n"
        "      source: {url: hf://datasets/acme/shards/shards.tar}  # hf:// maps to HTTPS\n"
        "      destination: data/shards.tar",
    ),
    "D008": (
        _YAML,
        "    - id: resnet-weights\n"
        "      kind: checkpoint\n"
        "      source: {package: torchvision}   # not installed in the interpreter, or its\n"
        "      sha256: 9a4c...01                # installed files have no such digest: D008",
        "    - id: resnet-weights\n"
        "      kind: checkpoint\n"
        "      source: {package: torchvision}   # a file of the installed distribution\n"
        "      sha256: 9a4c...01                # has this size and sha256",
    ),
    "D009": (
        _YAML,
        "    - id: digits\n"
        "      source: {url: https://example.org/digits.npz}\n"
        "      destination: data/digits.npz     # no sha256: D009 (a warning); only the size\n"
        "                                       # is checked",
        "    - id: digits\n"
        "      source: {url: https://example.org/digits.npz}\n"
        "      destination: data/digits.npz\n"
        "      sha256: 3f1c...e9",
    ),
    "D010": (
        _YAML,
        "    - id: digits\n"
        "      source: {url: https://example.org/digits.npz}\n"
        "      # no destination: D010 (nowhere to place it)",
        "    - id: resnet-weights\n"
        "      source: {package: torchvision}   # package and codebase items need no\n"
        "      sha256: 9a4c...01                # destination: they are verified in place",
    ),
    "D011": (
        _SH,
        "# the server sends one byte every 2 s; the item declares 50 kB\n"
        "$ reprobridge data fetch      # D011 after 30 s below --min-rate (1024 B/s)",
        "$ reprobridge data fetch --min-rate 100   # a slow mirror, accepted on purpose",
    ),
    "D012": (
        _SH,
        "# size: 51200 declared; the server keeps sending\n"
        "$ reprobridge data fetch      # D012: stopped at 51,200 bytes, the .part removed",
        "# the server sends the declared 51,200 bytes and ends the body\n$ reprobridge data fetch",
    ),
    "D013": (
        _SH,
        "# https://example.org/w.bin answers 302 Location: http://example.org/w.bin\n"
        "$ reprobridge data fetch      # D013: the redirect changes the scheme",
        "# a redirect to another https:// URL is followed (at most 10)\n$ reprobridge data fetch",
    ),
    "D014": (
        _YAML,
        "data:\n"
        "  - id: weights\n"
        '    source: {url: "https://example.org/w.bin"}\n'
        "    destination: ckpt/w.bin      # no sha256, no size: D014 (not downloaded)",
        "data:\n"
        "  - id: weights\n"
        '    source: {url: "https://example.org/w.bin"}\n'
        "    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n"
        "    destination: ckpt/w.bin      # (or: data fetch --allow-unverified)",
    ),
    "D015": (
        _SH,
        "# data[0].source.url: x-store://models/w.bin (format 1.1), no plugin provides x-store\n"
        "$ reprobridge validate    # D015 (a warning) at /environment/data/0/source/url\n"
        "$ reprobridge data fetch  # D015 at /environment/data/0/source/url: install a plugin",
        "# a distribution with the entry point x-store in reprobridge.data_schemes is installed\n"
        "$ reprobridge validate    # no D015\n"
        "$ reprobridge data fetch  # fetched by the plugin, verified, placed",
    ),
    "D016": (
        _SH,
        "# the installed x-store plugin raises, writes no file, or misses the deadline\n"
        "$ reprobridge data fetch  # D016 at /environment/data/0/source/url; nothing placed",
        "# the plugin writes the file; its size and sha256 match\n$ reprobridge data fetch",
    ),
    "D017": (
        _SH,
        "# an installed distribution declares data schemes named 's3' and 'store'\n"
        "$ reprobridge plugins     # D017 at /plugins/reprobridge.data_schemes/s3 (ignored)",
        "# the entry point is named 'x-store'\n"
        "$ reprobridge plugins     # listed; x-store:// URLs use it",
    ),
    "D018": (
        _SH,
        "# sha256 declared, no size; the server sends a body without end\n"
        "$ reprobridge data fetch      # D018: stopped at 1 GiB (--max-size), the .part removed",
        "# size: 51200 declared next to the sha256\n$ reprobridge data fetch",
    ),
    "D019": (
        _SH,
        "# the server sends its status line one byte a second\n"
        "$ reprobridge data fetch      # D019 after --timeout (60 s): the status line",
        "# the server answers with its status line and headers at once\n$ reprobridge data fetch",
    ),
    # ------------------------------------------------------------------- A: evidence, audit
    "A001": (
        _SH,
        "# runs/train-s0-.../record.json is truncated, is not JSON or misses run_id\n"
        "$ reprobridge audit          # A001 (file train-s0-.../record.json)\n"
        "$ reprobridge audit --attempt agent=no-such-dir   # A001, usage error, exit 2",
        "# a record valid against schemas/evidence-1.0.schema.json",
    ),
    "A002": (
        _JSON,
        '{"artifact": "digits-logreg", "launcher": "train-old", ...}\n'
        "// the manifest declares no launcher train-old: A002 at /launcher",
        '{"artifact": "digits-logreg", "launcher": "train", ...}',
    ),
    "A003": (
        _JSON,
        '{"log": null, ...}   // or log.txt was deleted from the run directory: A003',
        '{"log": {"path": "log.txt", "sha256": "5d1e...", "size": 2048}, ...}  // present',
    ),
    "A004": (
        _SH,
        "$ sed -i 's/accuracy 0.91/accuracy 0.97/' runs/train-s0-.../log.txt\n"
        "$ reprobridge audit          # A004 at /log: the log's sha256 changed",
        "# the log is byte-for-byte the one the runner digested",
    ),
    "A005": (
        _JSON,
        '{"outputs": [{"id": "metrics", "path": "outputs/metrics/metrics.json", ...}]}\n'
        "// outputs/metrics/metrics.json is gone from the run directory: A005 at /outputs/0",
        "// the file is in the run directory (its digest is then compared: A006)",
    ),
    "A006": (
        _SH,
        "$ echo '{\"accuracy\": 0.99}' > runs/train-s0-.../outputs/metrics/metrics.json\n"
        "$ reprobridge audit          # A006 at /outputs/0",
        "# the output's sha256 equals the one in the record",
    ),
    "A007": (
        _JSON,
        '{"measurements": [{"task": "acc", "value": 0.95, ...}]}\n'
        "// the recorded log says 'test accuracy: 0.912': A007 at /measurements/0/value",
        '{"measurements": [{"task": "acc", "value": 0.912, ...}]}\n'
        "// equal within a relative 1e-9 (absolute 1e-12) of the re-extracted value",
    ),
    "A008": (
        _YAML,
        "extract:\n"
        "  regex: 'top-1: ([0-9.]+)'   # the recorded log has no such line: A008 (an error\n"
        "                              # when the record claims a value, else a warning)\n"
        "  file: metrics.json          # a file that is not a declared output: A008 (warning)",
        "extract:\n"
        "  output: metrics             # a declared output, recorded with its digest\n"
        "  json: /accuracy",
    ),
    "A009": (
        _JSON,
        '{"code_tree_digest": "sha256-tree1:77ab..."}\n'
        "// codebase.tree_digest is sha256-tree1:af1a...: the run used other code: A009",
        '{"code_tree_digest": "sha256-tree1:af1a..."}   // the artifact\'s tree digest',
    ),
    "A010": (
        _SH,
        "# code/train.py was edited after the tree digest was recorded\n"
        "$ reprobridge audit          # A010 at /codebase/tree_digest; no 'available' badge",
        "# the refined code on disk has the manifest's tree digest",
    ),
    "A011": (
        _JSON,
        '{"lock_digest": "0aa1..."}   // the artifact\'s lock has sha256 0338...: A011',
        '{"lock_digest": "0338..."}   // equal to the artifact\'s lock digest',
    ),
    "A012": (
        _SH,
        "# environment/requirements.lock was edited; the manifest still says 0338...\n"
        "$ reprobridge audit          # A012 at /environment/lock/sha256",
        "# the lock on disk hashes to environment.lock.sha256",
    ),
    "A013": (
        _JSON,
        '{"code_tree_digest": null, "lock_digest": null, ...}\n'
        "// the run cannot be tied to the artifact: A013 (a warning)",
        '{"code_tree_digest": "sha256-tree1:af1a...", "lock_digest": "0338...", ...}',
    ),
    "A014": (
        _JSON,
        '{"launcher": "smoke", "scope": "scored", ...}\n'
        "// launcher smoke has scope: smoke: A014 at /scope",
        '{"launcher": "smoke", "scope": "smoke", ...}',
    ),
    "A015": (
        _JSON,
        '{"argv": ["python", "train.py", "--epochs", "1"], ...}\n'
        '// the launcher\'s argv is [python, train.py, --epochs, "100"]: A015 at /argv',
        '{"argv": ["/cache/envs/0338-py3.11/bin/python3.11", "train.py", "--seed", "3"], ...}\n'
        "// argv[0] resolved into the environment; {seed} filled with the record's seed 3",
    ),
    "A016": (
        _YAML,
        "launchers:\n"
        "  - id: smoke\n"
        "    scope: smoke        # the attempt's only value for task acc comes from here:\n"
        "    measurements:       # A016 (info), verdict toy\n"
        "      - {task: acc, extract: {regex: 'accuracy ([0-9.]+)'}}",
        "# a successful run of a scored launcher measured acc; smoke runs are then ignored",
    ),
    "A017": (
        _SH,
        "# task acc: statistic {seeds: 5}; the attempt ran only three seeds\n"
        "$ reprobridge run --seeds 0,1,2\n"
        "$ reprobridge audit          # A017 at /tasks/0/statistic/seeds, verdict toy",
        "$ reprobridge run            # the launcher's five seeds all give a value",
    ),
    "A018": (
        _JSON,
        '{"outputs": [{"id": "metrics", "preexisting": true, ...}]}\n'
        "// metrics.json was there before the run and unchanged after it; a measurement\n"
        "// reads it: A018",
        '{"outputs": [{"id": "metrics", "preexisting": false, ...}]}  // written by the run',
    ),
    "A019": (
        _SH,
        "# the run copied code/results/metrics.json (shipped in the refined code) to its\n"
        "# output instead of computing it; a measurement reads that output\n"
        "$ reprobridge audit          # A019",
        "# the output's bytes differ from every non-empty file of the refined code\n"
        "# (an output equal to one of the launcher's declared samples: A035 instead)",
    ),
    "A020": (
        _YAML,
        "tasks:\n"
        "  - {id: acc, kind: full, ...}\n"
        "environment:\n"
        "  data:\n"
        "    - {id: ckpt, kind: checkpoint, substitutes_training: true, ...}\n"
        "launchers:\n"
        "  - {id: eval, data: [ckpt], measurements: [{task: acc, ...}], ...}  # A020, toy",
        "tasks:\n"
        "  - {id: acc, kind: evaluation, ...}   # a checkpoint may stand in for training here",
    ),
    "A021": (
        _JSON,
        '{"status": "failed", "failure": {"reason": "exit-status", "detail": "exit status 1"}}\n'
        "// A021 at /failure: the run gives no value",
        '{"status": "succeeded", ...}',
    ),
    "A022": (
        _JSON,
        '{"status": "interrupted", ...}   // stopped by Ctrl-C or SIGTERM: A022\n'
        '{"status": "running", "runner": {"pid": 4242, ...}}\n'
        "// pid 4242 (with that start time and boot id) no longer exists: A022",
        '{"status": "running", "runner": {...}}   // its runner is alive: A023 instead',
    ),
    "A023": (
        _JSON,
        '{"status": "running", "runner": {"pid": 4242, ...}}\n'
        "// the runner process is alive (or runs on another host): A023 (info)",
        '{"status": "succeeded", ...}',
    ),
    "A024": (
        _SH,
        "# the attempt holds runs of 'smoke' only, and only 'train' measures task acc\n"
        "$ reprobridge audit --attempt agent-a=runs/agent-a   # A024, verdict not-executed",
        "# a run of 'train' exists (if it failed, its A021/A022 say why instead)",
    ),
    "A025": (
        _YAML,
        "reference:\n  observations: []      # no interval: A025, verdict inconclusive",
        "reference:\n"
        "  observations:\n"
        "    - {value: 0.905, provenance: {source: lab-a}}\n"
        "    - {value: 0.912, provenance: {source: lab-b}}",
    ),
    "A026": (
        _YAML,
        "reference:\n"
        "  observations:\n"
        "    - {value: 0.5, provenance: {source: lab-a}}   # floor-only interval: A026",
        "reference:\n"
        "  observations:       # two or more: a Student-t interval\n"
        "    - {value: 0.5, provenance: {source: lab-a}}\n"
        "    - {value: 0.51, provenance: {source: lab-b}}",
    ),
    "A027": (
        _YAML,
        "reference:\n"
        "  observations:\n"
        "    - {value: 1.0, provenance: {source: lab-a}}\n"
        "    - {value: .nan, provenance: {source: lab-b}}   # A027, verdict inconclusive",
        "reference:\n"
        "  observations:\n"
        "    - {value: 1.0, provenance: {source: lab-a}}\n"
        "    - {value: 1.02, provenance: {source: lab-b}}",
    ),
    "A028": (
        _SH,
        "# the log of every seed ends with 'loss: nan'; the task measures the loss\n"
        "$ reprobridge audit          # A028, verdict incompatible (z = +inf, p = 0)",
        "# a finite value, inside or outside the interval (then A029)",
    ),
    "A029": (
        _YAML,
        "# references 0.905, 0.912, 0.915, 0.909, 0.918: interval [0.8964, 0.9272]\n"
        "# the attempt's value 0.93 (better than every reference): A029, incompatible",
        "# the attempt's value 0.90: inside the interval, compatible",
    ),
    "A030": (
        _SH,
        "# a value just outside its interval; with Holm's correction over the attempt's\n"
        "# tasks its adjusted p-value is >= 1 - level\n"
        "$ reprobridge audit --holm   # A030 (info), verdict compatible",
        "$ reprobridge audit          # without --holm: A029, incompatible",
    ),
    "A031": (
        _YAML,
        "published: {value: 0.95}\n"
        "reference:             # interval [0.8964, 0.9272]\n"
        "  observations: [...]  # reprobridge audit --curation: A031 at /tasks/0/published",
        "published: {range: [0.90, 0.92]}   # midpoint 0.91: inside the interval",
    ),
    "A032": (
        _YAML,
        "published: {unit: '%'}   # neither value nor range (R007 in validation);\n"
        "                         # reprobridge audit --curation: A032",
        "published: {value: 91.2, unit: '%'}",
    ),
    "A033": (
        _SH,
        "# 'reprobridge run . train' was run twice: two succeeded runs with seed 0\n"
        "$ reprobridge audit          # A033 (info); the later run (started_at) counts",
        "# one succeeded run per seed (failed repeats do not count)",
    ),
    "A034": (
        _YAML,
        "tasks:\n"
        "  - id: latency          # no launcher has a measurement with task: latency\n"
        "                         # A034, verdict inconclusive (R006 in validation)",
        "launchers:\n  - id: bench\n    measurements:\n      - {task: latency, ...}",
    ),
    "A035": (
        _YAML,
        "launchers:\n"
        "  - id: scored\n"
        "    samples:\n"
        "      - log: samples/scored-s0.log\n"
        "        outputs: {metrics: samples/scored-s0-metrics.json}\n"
        "# the run's output metrics is byte-identical to samples/scored-s0-metrics.json:\n"
        "# A035 (a warning) on the tasks read from it; the value counts",
        "# a deterministic rerun whose output differs from the samples by a single byte\n"
        "# (a timestamp, a path): no finding",
    ),
    "A036": (
        _JSON,
        '{"env_mode": "current", "drift": ["E002: numpy is installed at 2.0.1, the lock '
        'pins 1.26.4"]}\n'
        "// A036 (a warning) at /drift; the run's values count",
        '{"env_mode": "cached", "drift": []}   // run in the environment built from the lock',
    ),
    "A037": (
        _JSON,
        "// launcher scored declares seeds [0, 1, 2, 3, 4]; runs made with --seeds 40,41,...\n"
        '{"launcher": "scored", "seed": 40, ...}          // A037 at /seed',
        '{"launcher": "scored", "seed": 0, ...}           // a declared seed',
    ),
    "A038": (
        _JSON,
        "// runs/scored-s4 is a copy of runs/scored-s0 with the seed edited\n"
        '{"seed": 4, "log": {"sha256": "<same as seed 0>", ...}}   // A038 at /log',
        '{"seed": 4, "log": {"sha256": "<its own>", ...}}          // each seed was run',
    ),
    "A039": (
        _JSON,
        "// a smoke run passed off as scored: launcher, scope and argv edited together\n"
        '{"run_id": "smoke-s0-20260101T000000000000Z-1a2b3c4d", "launcher": "scored", ...}'
        "  // A039 at /run_id",
        '{"run_id": "scored-s0-20260101T000000000000Z-1a2b3c4d", "launcher": "scored", ...}',
    ),
    "A040": (
        _SH,
        "$ ln -sf ~/.ssh/id_ed25519 runs/scored-s0/log.txt\n"
        "$ reprobridge audit      # A040 at /log/path: the link is not followed",
        "$ reprobridge audit      # log.txt is a regular file in the run directory",
    ),
    "A045": (
        _SH,
        "$ reprobridge references add runs/ && reprobridge audit . runs/   # A045 (warning)",
        "$ reprobridge references add refs/ && reprobridge audit . attempt/   # other runs",
    ),
    "A046": (
        _SH,
        "$ reprobridge init demo --yes && reprobridge run demo --env current\n"
        "$ reprobridge audit demo   # A046: functional and reproduced withheld",
        "# every placeholder replaced (no P finding in `reprobridge validate`)\n"
        "$ reprobridge audit demo",
    ),
    "A050": (
        _SH,
        "# runs copied from another tool, without runs/ledger.jsonl\n"
        "$ reprobridge audit          # A050 (warning) on the attempt",
        "# runs recorded by 'reprobridge run', which keeps runs/ledger.jsonl\n$ reprobridge audit",
    ),
    "A051": (
        _SH,
        "# an entry of runs/ledger.jsonl edited by hand (its hash no longer matches)\n"
        "$ reprobridge audit          # A051 at ledger.jsonl:<line>",
        "# the ledger as the runner wrote it\n$ reprobridge audit",
    ),
    "A052": (
        _SH,
        "# an unfavourable run deleted; its ledger entry remains\n"
        "$ rm -r runs/scored-s1-20261130T101500000000Z-1a2b3c4d\n"
        "$ reprobridge audit          # A052: the run's tasks are invalid-evidence",
        "# every ledgered run submitted\n$ reprobridge audit",
    ),
    "A053": (
        _SH,
        "# one run directory copied under a second name to count twice\n"
        "$ cp -r runs/scored-s0-<stamp> runs/scored-s0-copy\n"
        "$ reprobridge audit          # A053 on the copy",
        "# each run once\n$ reprobridge audit",
    ),
    "A054": (
        _SH,
        "# two lines of runs/ledger.jsonl swapped\n"
        "$ reprobridge audit          # A054 on the attempt",
        "# the ledger in the order the runs finished\n$ reprobridge audit",
    ),
    "A055": (
        _SH,
        "# a run directory written by hand, not by the runner\n"
        "$ mkdir runs/scored-s9 && cp fabricated/record.json fabricated/log.txt runs/scored-s9/\n"
        "$ reprobridge audit          # A055 on runs/scored-s9",
        "# a run recorded by 'reprobridge run'\n$ reprobridge audit",
    ),
    "A056": (
        _SH,
        "# a log edited and its digest recomputed in record.json\n"
        "$ reprobridge audit          # A056: the record is not the one the ledger names",
        "# the record as the runner wrote it\n$ reprobridge audit",
    ),
    "A057": (
        _SH,
        "# the last runs and their ledger entries removed after 'run' printed the head\n"
        "$ reprobridge audit --expect-head 9c1f...e2   # A057",
        "# the head the runner printed\n$ reprobridge audit --expect-head 9c1f...e2",
    ),
    "A058": (
        _SH,
        "# a log fabricated with accuracy 95.0, digests and ledger made consistent\n"
        "$ reprobridge audit --rerun all   # A058: recorded 95.0, re-executed 90.1",
        "# an honest run: the re-execution gives the recorded value\n"
        "$ reprobridge audit --rerun all",
    ),
    "A059": (
        _SH,
        "# a recorded run whose launcher fails when it is run again\n"
        "$ reprobridge audit --rerun 2     # A059 on that run",
        "# the launcher runs again to success\n$ reprobridge audit --rerun 2",
    ),
    "A060": (
        _YAML,
        "codebase:\n  upstream:\n    repository: https://github.com/owner/paper.git\n"
        "    commit: '0000000000000000000000000000000000000000'\n"
        "# deprecated: no auditor reports A060 since the badge rule cites P003 for this commit",
        "codebase:\n  upstream:\n    repository: https://github.com/owner/paper.git\n"
        "    commit: 3f9c2a7e1b4d5c6e7f8091a2b3c4d5e6f7a8b9c0",
    ),
    "A061": (
        _SH,
        "# the runs read task acc with {kind: x-tensorboard}; this machine lacks the plugin\n"
        "$ reprobridge audit       # A061 on each run; acc is inconclusive",
        "# the plugin is installed where the audit runs\n"
        "$ reprobridge audit       # acc is re-extracted by the plugin and judged",
    ),
    "A062": (
        _SH,
        "# the installed x-tensorboard plugin raises (or times out) on a recorded log\n"
        "$ reprobridge audit       # A062 on that run; acc is inconclusive",
        "# the plugin reads every recorded log\n$ reprobridge audit",
    ),
    "A063": (
        _YAML,
        "reference:\n"
        "  observations:\n"
        "    - {value: 1.79e308, provenance: {source: lab-a}}\n"
        "    - {value: 1.79e308, provenance: {source: lab-b}}   # A063, verdict inconclusive",
        "reference:\n"
        "  observations:       # huge but held: 0.0 and 1.9e154 give [-2.0e155, 2.2e155]\n"
        "    - {value: 0.0, provenance: {source: lab-a}}\n"
        "    - {value: 1.9e154, provenance: {source: lab-b}}",
    ),
    "A065": (
        _SH,
        "# runs copied without the runs directory's .env/ (their records name a snapshot)\n"
        "$ cp -r runs/scored-s* attempt/\n"
        "$ reprobridge audit . attempt/   # A065 (warning) at /environment_sha256",
        "$ cp -r runs/. attempt/          # the run directories and .env/ together\n"
        "$ reprobridge audit . attempt/",
    ),
    "A066": (
        _SH,
        "# the snapshot is edited to claim another Python than the run had\n"
        "$ sed -i 's/3.11.7/3.12.1/' runs/.env/<sha256>.json\n"
        "$ reprobridge audit      # A066 at /environment_sha256: the run is tainted",
        "$ reprobridge audit      # runs/.env/<sha256>.json as the runner wrote it",
    ),
    "A067": (
        _SH,
        "$ mv runs /tmp/elsewhere && ln -s /tmp/elsewhere runs\n"
        "$ reprobridge audit      # A067 on the attempt: runs/ leads outside, not audited\n"
        "$ ln -s /tmp/other-run runs/scored-s0   # A067 for that run folder\n"
        "# a launcher that makes its log.txt a link: the run fails with A067 in its detail",
        "# runs/ and every run folder are directories of the artifact\n$ reprobridge audit",
    ),
    "A068": (
        _SH,
        "$ rm runs/ledger.jsonl\n$ reprobridge audit --trust KEYS   # A068 (error) on the attempt",
        "# the runs directory with the ledger.jsonl the runner kept\n"
        "$ reprobridge audit --trust KEYS",
    ),
    "A069": (
        _SH,
        "# a launcher left a link to a host file and a FIFO in its run folder\n"
        "$ reprobridge audit                # A069 (warning) on that run's record\n"
        "$ reprobridge audit --trust KEYS   # A069 (error): the run is tainted",
        "# run folders hold regular files and directories only\n$ reprobridge audit",
    ),
    "A070": (
        _SH,
        "# same_seed_tolerance 0.18 declared; every recorded accuracy raised by 0.15\n"
        "$ reprobridge audit --rerun all   # A070: paired t test p < 0.01 over 5 runs",
        "# honest runs: the re-executed values scatter around the recorded ones\n"
        "$ reprobridge audit --rerun all",
    ),
    "A071": (
        _YAML,
        "tasks:\n  - id: acc\n    same_seed_tolerance: 0.5   # A071: half-width 0.196",
        "tasks:\n  - id: acc\n    same_seed_tolerance: 0.01",
    ),
    "A072": (
        _SH,
        '# bench-results.json gives the value as a string: "value": "96.9"\n'
        "$ reprobridge bench judge ART ws/bench-results.json   # A072 at /results/0/value, exit 2",
        '# "value": 96.9, with the runs behind it\n'
        "$ reprobridge bench judge ART ws/bench-results.json",
    ),
    "A073": (
        _JSON,
        '{"bench_results_version": "1.0", "results": [{"task": "top5", "value": 91.0}]}'
        "  // A073: the artifact has no task top5",
        '{"bench_results_version": "1.0", "results": [{"task": "acc", "value": 90.1}]}',
    ),
    "A074": (
        _JSON,
        '{"task": "acc", "value": 90.1, "runs": [{"log": "../../etc/passwd"}]}'
        "  // A074: '..' leaves the workspace",
        '{"task": "acc", "value": 90.1, "runs": [{"log": "runs/s0.log", "seed": 0}]}',
    ),
    "A075": (
        _SH,
        "# runs/s0.log has 200 MB; the cap is 64 MiB\n"
        "$ reprobridge bench judge ART ws/bench-results.json   # A075, the log is not read",
        "$ reprobridge bench judge ART ws/bench-results.json --max-log-bytes 300000000",
    ),
    "A076": (
        _JSON,
        '{"task": "acc", "value": 90.1}  // A076: no run behind the value, unsupported',
        '{"task": "acc", "value": 90.1, "runs": [{"log": "runs/s0.log", "seed": 0}]}',
    ),
    "A077": (
        _JSON,
        '{"task": "acc", "value": 95.0, "runs": [{"log": "runs/s0.log"}]}'
        "  // A077: the log prints test accuracy: 90.0000",
        '{"task": "acc", "value": 90.0, "runs": [{"log": "runs/s0.log"}]}',
    ),
    "A078": (
        _JSON,
        '{"task": "acc", "value": 90.0, "runs": [{"log": "runs/notes.txt"}]}'
        "  // A078: no line matches the artifact's pattern",
        '{"task": "acc", "value": 90.0, "runs": [{"log": "runs/s0.log"}]}',
    ),
    "A079": (
        _SH,
        "# seeds 0, 1, 2 write the same log, but also the same run id and start time\n"
        "$ reprobridge audit   # a copy: A038 on the later runs, not A079",
        "# a deterministic program: byte-identical logs, distinct runs\n"
        "$ reprobridge audit   # A079 (info) on the runs of seeds 1 and 2",
    ),
    "A080": (
        _YAML,
        "tasks:\n  - id: acc\n    published: {value: 0.91, unit: '%'}\n"
        "    reference:\n      observations:\n        - value: 101.2   # A080: above 100 %",
        "tasks:\n  - id: acc\n    published: {value: 91.0, unit: '%'}\n"
        "    reference:\n      observations:\n        - value: 91.2",
    ),
    "A081": (
        _YAML,
        "# observations 72.8 ... 111.4, unit '%': the interval reaches past 100   # A081\n"
        "tasks:\n  - id: acc\n    published: {value: 92.1, unit: '%'}",
        "# observations 91.9 ... 92.4, unit '%': the interval stays inside [0, 100]\n"
        "tasks:\n  - id: acc\n    published: {value: 92.1, unit: '%'}",
    ),
    "A082": (
        _YAML,
        "# interval [72.8, 111.4]: 38.6 wide, more than 25% of 92.1   # A082\n"
        "tasks:\n  - id: acc\n    published: {value: 92.1}",
        "# interval [91.2, 93.0]: 1.8 wide\ntasks:\n  - id: acc\n    published: {value: 92.1}",
    ),
    "A083": (
        _YAML,
        "reference:\n  observations:\n    - value: 95.0   # A083: run train-s0-... recorded 91.2\n"
        "      provenance: {source: reference run, run: train-s0-20260101T000000000000Z-ab12cd34}",
        "reference:\n  observations:\n    - value: 91.2\n"
        "      provenance: {source: reference run, run: train-s0-20260101T000000000000Z-ab12cd34}",
    ),
    "A084": (
        _SH,
        "# the authors' runs only, signed by an author key: results consistent, not reproduced\n"
        "$ reprobridge audit --trust KEYS   # A084 on reproduced, per task",
        "$ reprobridge audit --trust KEYS --rerun 4   # the committee re-executes",
    ),
    "A085": (
        _SH,
        "# a folder, no DOI in the manifest\n$ reprobridge audit .   # A085 on available",
        "$ reprobridge audit --table submitted.tar.gz   # the archive's digest is recorded",
    ),
    "A086": (
        _YAML,
        "launchers:\n  - id: train   # A086: no description",
        "launchers:\n  - id: train\n    description: trains one seed and prints its accuracy",
    ),
    "A090": (
        _SH,
        "# submissions.toml: id = 'p1   (a quote not closed)\n"
        "$ reprobridge audit --table --submissions submissions.toml   # A090 at line 2, exit 2",
        "# submissions.toml: id = 'p1'\n"
        "$ reprobridge audit --table --submissions submissions.toml   # one row, named p1",
    ),
    "A091": (
        _SH,
        "# submissions.toml: [[submission]] ... expect_hed = '9f2c...'\n"
        "$ reprobridge audit --table --submissions submissions.toml   # A091 at that line",
        "# submissions.toml: [[submission]] ... expect_head = '9f2c...'\n"
        "$ reprobridge audit --table --submissions submissions.toml   # the head is checked",
    ),
    "A092": (
        _SH,
        "# submissions.toml: path = '../elsewhere/p1'\n"
        "$ reprobridge audit --table --submissions submissions.toml   # A092: p1 is an error row",
        "# submissions.toml: path = 'p1.tar.gz'   (below the file's folder)\n"
        "$ reprobridge audit --table --submissions submissions.toml   # p1 is audited",
    ),
    "A094": (
        _SH,
        "# submissions.toml: budget = { time = 60 }, runs of 5 minutes each\n"
        "$ reprobridge audit --table --submissions submissions.toml --rerun 4   # A094",
        "# submissions.toml: budget = { time = 3600 }\n"
        "$ reprobridge audit --table --submissions submissions.toml --rerun 4",
    ),
    "A093": (
        _SH,
        "# submissions.toml: archive_sha256 = '<digest pack printed>'; p1.tar.gz was replaced\n"
        "$ reprobridge audit --table --submissions submissions.toml   # A093: tampered",
        "# the archive is the one packed: its digest is the one recorded\n"
        "$ reprobridge audit --table --submissions submissions.toml   # no A093",
    ),
    "A100": (
        _SH,
        "# suite.toml: tasks = ['logreg-acc']   (the artifact's id is logreg-accuracy)\n"
        "$ reprobridge bench run oracle suite.toml -o out   # A100; the other tasks run",
        "# suite.toml: tasks = ['logreg-accuracy']\n"
        "$ reprobridge bench run oracle suite.toml -o out",
    ),
    "A101": (
        _SH,
        "$ reprobridge bench run 'python agent.py' suite.toml -o out --timeout 60\n"
        "# the agent is still working after 60 s: outcome timeout, A101; the batch goes on",
        "$ reprobridge bench run 'python agent.py' suite.toml -o out --timeout 3600\n"
        "# the agent finishes within its budget: outcome finished",
    ),
    "A102": (
        _SH,
        "# the agent printed its value and left no bench-results.json\n"
        "$ reprobridge bench run 'python agent.py' suite.toml -o out   # A102: not-executed",
        "# the agent left bench-results.json and the logs it names\n"
        "$ reprobridge bench run 'python agent.py' suite.toml -o out",
    ),
    # ------------------------------------------------------------------- N: runner
    "N001": (
        _SH,
        "$ reprobridge run . trian    # N001 at /launchers, hint: did you mean 'train'?\n"
        "$ reprobridge extract --launcher trian --log sample.log   # N001",
        "$ reprobridge run . train",
    ),
    "N002": (
        _SH,
        "$ reprobridge run . train --scope smoke   # train is scored: N002, exit 2",
        "$ reprobridge run . smoke --scope smoke",
    ),
    "N003": (
        _SH,
        '$ reprobridge run --seeds 0,one     # N003, exit 2 (also --seeds "")',
        "$ reprobridge run --seeds 0,1,2",
    ),
    "N004": (
        _SH,
        "$ reprobridge run -j 0              # N004: jobs must be at least 1\n"
        "$ reprobridge run --timeout 0       # N004: timeout must be positive",
        "$ reprobridge run -j 4 --timeout 3600",
    ),
    "N005": (
        _SH,
        "# the manifest declares no launcher with scope smoke\n"
        "$ reprobridge run --scope smoke     # N005, exit 2",
        "$ reprobridge run --scope scored    # at least one scored launcher",
    ),
    "N006": (
        _SH,
        "$ reprobridge extract --run runs/   # a directory without record.json: N006",
        "$ reprobridge extract --run runs/train-s0-20260101T000000000000Z-1a2b3c4d",
    ),
    "N007": (
        _SH,
        "$ reprobridge run no-such-dir       # no rra.yaml: N007, exit 2\n"
        "# (also when rra.yaml does not parse or is not a valid manifest)",
        "$ reprobridge run examples/digits-logreg",
    ),
    "N020": (
        _SH,
        "$ reprobridge run demo --executor kubernetes   # N020, exit 2",
        "$ reprobridge run demo --executor dask-local",
    ),
    "N021": (
        _SH,
        "$ reprobridge run demo --executor dask --scheduler tcp://10.0.0.9:8786\n"
        "# no scheduler answers there within the start timeout: N021, exit 2",
        "$ reprobridge run demo --executor dask --scheduler tcp://scheduler.example:8786",
    ),
    "N022": (
        _YAML,
        "    resources: {cpus: 64, memory: 512GiB}\n"
        "# every worker has 2 cores and 8 GiB: N022 before anything is submitted",
        "    resources: {cpus: 2, memory: 4GiB}",
    ),
    "N010": (
        _SH,
        "# launcher train writes results/metrics.json whatever the seed\n"
        "$ reprobridge run -j 2 . train     # N010 at /launchers/train/outputs/0/path, exit 2",
        '# outputs: [{id: metrics, path: "{run_dir}/metrics.json"}]\n'
        "$ reprobridge run -j 2 . train     # each run writes its own file",
    ),
    "N011": (
        _SH,
        "# a host without bubblewrap (or where namespaces are not permitted)\n"
        "$ reprobridge run --sandbox .     # N011, exit 2: nothing runs\n"
        "$ reprobridge review .            # N011 too: the sandbox is its default",
        "$ apt-get install bubblewrap\n$ reprobridge run --sandbox .",
    ),
    "N023": (
        _YAML,
        "    env: {PATH: /opt/tools/bin:/usr/bin}\n"
        "# reprobridge run --sandbox: N023 at /launchers/train/env/PATH; /opt/tools/bin is\n"
        "# left out of PATH and not shown to the launcher",
        "    env: {PATH: /usr/bin}   # the tools come from the lock or the artifact",
    ),
    "N024": (
        _SH,
        "# train.py ends with os.symlink('/etc/shadow', 'cache/key') in its run folder\n"
        "$ reprobridge run . train   # N024: 'cache/key' (link), in the record's run_folder",
        "# the launcher writes regular files and directories only\n$ reprobridge run . train",
    ),
    "N030": (
        _SH,
        '# submission/pyproject.toml: [tool.reprobridge] ignore = ["F"]\n'
        "$ cd submission && reprobridge validate .   # N030 on stderr; F findings still reported",
        "$ reprobridge --config ~/committee.toml validate submission/   # the committee's file",
    ),
    "N031": (
        _SH,
        "$ reprobridge check --no-sandbox submission/   # N031 on stderr, then the check runs",
        "$ reprobridge check submission/   # sandboxed (the default)",
    ),
    # ------------------------------------------------------------------- B: build agent
    "B001": (
        _YAML,
        "# claims.yaml: a claim with neither value nor range\n"
        "claims:\n"
        "  - id: top1\n"
        "    measured: top-1 accuracy\n"
        "    direction: higher        # B001 at /claims/0",
        "claims:\n"
        "  - id: top1\n"
        "    measured: top-1 accuracy\n"
        "    value: 76.1\n"
        "    direction: higher",
    ),
    "B002": (
        _YAML,
        "# the repository has no eval.py; the claim is planned without the hint\n"
        "    hints: {script: eval.py}      # B002 at /claims/0/hints/script",
        "    hints: {script: train.py}     # train.py is in the repository",
    ),
    "B003": (
        _SH,
        "$ reprobridge build ./repo --claims claims.yaml --commit deadbeef   # B003, exit 2",
        "$ reprobridge build ./repo --claims claims.yaml   # HEAD of ./repo",
    ),
    "B004": (
        _SH,
        "# three entry points, none prints text that matches claim 'bleu'\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B004 (warning) at /claims/1",
        "# the claim names its script: hints: {script: translate.py}",
    ),
    "B049": (
        _SH,
        "# ten entry points; the one claim names no script and no label any of them prints\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B004 (warning), B049: stops",
        "# the claim names its script: hints: {script: train.py}",
    ),
    "B050": (
        _SH,
        "# claims.yaml: hints: {script: analysis.ipynb}; the notebook is nbformat 3\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B050 (warning) at /claims/0/hints",
        "# analysis.ipynb is nbformat 4: it runs as analysis_notebook.py",
    ),
    "B051": (
        _SH,
        "# analysis.ipynb starts with %matplotlib inline and !pip install -r requirements.txt\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B051 (warning): 2 lines commented",
        "# analysis.ipynb has only Python in its code cells, and no analysis_notebook.py exists",
    ),
    "B052": (
        _SH,
        "# pkg/__init__.py: __version__ = version(__name__); pyproject.toml: a [project] name\n"
        "# with a space ('my pkg'); the smoke run stops with PackageNotFoundError\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B052 (warning), then B007",
        "# pyproject.toml: [project] name = 'mypkg', version = '1.2'\n"
        "$ reprobridge build ./repo --claims claims.yaml   # mypkg-1.2.dist-info/ recorded",
    ),
    "B053": (
        _SH,
        "# the repository already holds a file named mypkg-1.2.dist-info\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B053 (warning), then B007",
        "# nothing of that name in the repository\n"
        "$ reprobridge build ./repo --claims claims.yaml   # mypkg-1.2.dist-info/ recorded",
    ),
    "B056": (
        _SH,
        "# train.py reads data/x.npy; the README writes it with\n"
        "#   python gen.py --out data/x.npy && rm -rf ~/.cache   (a second program)\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B056 (warning), then B007",
        "# the README writes it with: python gen.py --out data/x.npy\n"
        "$ reprobridge build ./repo --claims claims.yaml   # gen.py runs first, recorded",
    ),
    "B057": (
        _SH,
        "# gen.py writes data/x.npy but fails (ValueError) when run first\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B057 (warning), then B007",
        "# gen.py runs and writes data/x.npy\n"
        "$ reprobridge build ./repo --claims claims.yaml   # gen.py runs first, recorded",
    ),
    "B058": (
        _SH,
        "# one scored run takes 90 s; the limit leaves 2 minutes after the probe\n"
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 10   # B058: 3 runs",
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 20   # 5 reference runs",
    ),
    "B059": (
        _SH,
        "# one scored run takes 5 minutes; 2 minutes of the limit are left after the probe\n"
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 10   # B059, not run",
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 40 --resume",
    ),
    "B060": (
        _SH,
        "# claims.yaml: the paper says 'test acc', the script prints 'accuracy on the test set'\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B060, task not measured",
        "# claims.yaml: hints: {label: 'accuracy on the test set'}\n"
        "$ reprobridge build ./repo --claims claims.yaml --resume",
    ),
    "B061": (
        _SH,
        "# train.py trains in 'while True:' and prints its accuracy at every step\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B061, not run",
        "# train.py: 'for step in range(args.steps):' instead, recorded as an execution-fix\n"
        "$ reprobridge build ./repo --claims claims.yaml --resume",
    ),
    "B062": (
        _SH,
        "# run.py splits its data without a seed; the clean-room run drew outside the interval\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B062, a second attempt made",
        "# run.py takes a seed option (a recorded convenience change): its runs repeat\n"
        "$ reprobridge build ./repo --claims claims.yaml",
    ),
    "B063": (
        _SH,
        "# three reference runs of 20 minutes filled the hour; the check's scored run did not fit\n"
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 60   # B063",
        "# the Reviewer alone runs again, with its scored attempt\n"
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 90 --resume",
    ),
    "B005": (
        _SH,
        "# requirements.txt pins a version no index has for any interpreter\n"
        "numpy==0.0.1                  # B005 after every relaxation step",
        "numpy==1.16.0                 # relaxed to the oldest numpy with a wheel here",
    ),
    "B006": (
        _SH,
        "# train.py imports a module no distribution of the lock provides\n"
        "import internal_toolkit       # B006: ModuleNotFoundError in the built environment",
        "import numpy                  # provided by numpy in the lock",
    ),
    "B007": (
        _SH,
        "# the smoke run fails with an error no fix rule classifies\n"
        "RuntimeError: dataset server unreachable   # B007, the traceback is in the record",
        "ImportError: cannot import name 'logsumexp' from 'scipy.misc'   # fixed, recorded",
    ),
    "B008": (
        _JSON,
        "// the advisor proposes a patch; the smoke run still fails with the same error\n"
        '{"file": "train.py", "old": "import foo", "new": "import bar"}   // B008, not applied',
        "// a proposed patch after which the smoke run passes is recorded with code record",
    ),
    "B009": (
        _SH,
        "# the scored log prints no number near the label 'test accuracy'\n"
        "loss 0.41                     # B009 for the claim",
        "test accuracy: 0.9711         # found by label and closeness",
    ),
    "B010": (
        _YAML,
        "# the extractor does not give the sample's value\n"
        "extract: {kind: regex, pattern: 'acc (\\d+)'}   # B010 on samples/scored-s0/log.txt",
        "extract: {kind: regex, pattern: 'test accuracy: ([0-9.]+)'}",
    ),
    "B011": (
        _SH,
        "# the written manifest has a validation error or warning\n"
        "$ reprobridge validate --strict OUT   # B011 in the build report",
        "$ reprobridge validate --strict OUT   # no finding: the Packager's gate passes",
    ),
    "B012": (
        _SH,
        "# the clean-room check of the packed artifact fails (smoke run, audit)\n"
        "$ reprobridge check --scored OUT.tar.gz   # B012 in the build report",
        "$ reprobridge check --scored OUT.tar.gz   # passes: the build's verdict stands",
    ),
    "B013": (
        _SH,
        "# claims.yaml changed since the last build\n"
        "$ reprobridge build ./repo --claims claims.yaml --resume   # B013 (info): planner re-run",
        "$ reprobridge build ./repo --claims claims.yaml --resume   # every record reused",
    ),
    "B014": (
        _SH,
        "$ reprobridge build ./repo --claims c.yaml --advisor http://127.0.0.1:9/v1   # B014",
        "$ reprobridge build ./repo --claims c.yaml --advisor none",
    ),
    "B015": (
        _SH,
        "# the advisor's call budget is spent\n"
        "$ REPROBRIDGE_ADVISOR_MAX_CALLS=0 reprobridge build ... --advisor URL   # B015",
        "$ reprobridge build ... --advisor URL   # within budget",
    ),
    "B016": (
        _SH,
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 1   # B016 after 1 minute",
        "$ reprobridge build ./repo --claims claims.yaml --max-minutes 30",
    ),
    "B017": (
        _YAML,
        "hints: {seeds: [0, 1, 2]}   # which statistic? planned over seed 0: B017",
        "hints: {seeds: [0, 1, 2], statistic: mean}",
    ),
    "B018": (
        _YAML,
        "# train.py takes no seed and seeds itself from the clock: the seed option is undone\n"
        "hints: {script: train.py, seeds: [0, 1, 2], statistic: mean}   # B020, B018",
        "# train.py takes no seed; the Reproducer adds --seed and re-plans over every seed\n"
        "hints: {script: train.py, seeds: [0, 1, 2], statistic: mean}",
    ),
    "B020": (
        _SH,
        "# claims.yaml: seeds: [1]; train.py takes no seed, and two runs with REPRO_SEED=1\n"
        "# print different values (it seeds from the clock)\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B020: the seed option is undone",
        "# train.py uses random and numpy only: --seed 1 makes two runs print the same value\n"
        "$ reprobridge build ./repo --claims claims.yaml   # a --seed option, recorded",
    ),
    "B021": (
        _SH,
        "# the smoke run is stopped at its budget; train.py has no epoch or iteration count\n"
        "while not converged(): step()                      # B021",
        "EPOCHS = 200                  # patched: the smoke launcher sets REPRO_EPOCHS=1",
    ),
    "B022": (
        _YAML,
        "# a cd out of the repository; the claim is planned without the hint\n"
        "    hints: {command: 'cd /data && python train.py'}   # B022 at /claims/0/hints/command",
        "    hints: {command: 'cd experiments/demo && OMP_NUM_THREADS=1 python demo.py'}",
    ),
    "B023": (
        _SH,
        "# train.py: try: import wandb / except ImportError: wandb = None, and wandb's\n"
        "# pinned release does not resolve with the others: left out\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B023 (warning), the build goes on",
        "import wandb                  # a required import: resolved and imported (else B006)",
    ),
    "B024": (
        _YAML,
        "# fixes/py3.diff was written against another commit\n"
        "patch: {path: fixes/py3.diff, why: the code is Python 2}   # B024 at /patch/path",
        "# fixes/py3.diff is 'git diff' of a checkout of the commit the build uses\n"
        "patch: {path: fixes/py3.diff, why: the code is Python 2}",
    ),
    "B040": (
        _SH,
        "# the recorded patch edits lines that the new --commit no longer has\n"
        "$ reprobridge build ./repo --claims claims.yaml -o out --commit NEW --resume  # B040",
        "$ reprobridge code record -C out --kind execution-fix --why 'import os is missing'\n"
        "$ reprobridge build ./repo --claims claims.yaml -o out --resume",
    ),
    "B041": (
        _SH,
        "$ reprobridge code record -C out --kind execution-fix --why 'import os is missing'\n"
        "$ reprobridge build ./repo --claims claims.yaml -o out --resume   # B041 (info)",
        "$ reprobridge build ./repo --claims claims.yaml -o out --resume   # nothing recorded",
    ),
    "B045": (
        _SH,
        "# train.py --seed 0 prints a value summed over a set of strings (its order follows\n"
        "# hash randomisation): two runs with seed 0 print 0.9512, then 0.9488\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B045: PYTHONHASHSEED=0, recorded",
        "# two smoke runs with seed 0 print the same value\n"
        "$ reprobridge build ./repo --claims claims.yaml",
    ),
    "B046": (
        _SH,
        "# train.py seeds numpy but draws its split from random, never seeded: two runs with\n"
        "# seed 0 differ, also with PYTHONHASHSEED=0 and one thread\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B046: likely an unseeded generator",
        "# train.py seeds every generator it uses from --seed\n"
        "$ reprobridge build ./repo --claims claims.yaml",
    ),
    "B047": (
        _SH,
        "# train.py (2024-01) calls np.product, removed in numpy 2.0; no fix rule applies\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B047: numpy of the commit's era",
        "# train.py runs with the newest versions\n$ reprobridge build ./repo --claims claims.yaml",
    ),
    "B048": (
        _SH,
        "# a 2016 repository written for Python 3.5, which the resolver does not serve\n"
        "$ reprobridge build ./repo --claims claims.yaml   # B048: port the code forward",
        "# a 2021 repository; Python 3.9 is installed with pyenv\n"
        "$ reprobridge build ./repo --claims claims.yaml",
    ),
    # ------------------------------------------------------------------- K: keys, signatures
    "K001": (
        _SH,
        "# runs recorded without --sign\n$ reprobridge audit --trust KEYS   # K001 on every run",
        "$ reprobridge run --sign --key alice.key\n$ reprobridge audit --trust KEYS",
    ),
    "K002": (
        _SH,
        "# the payload of runs/<run>/record.dsse.json changed after signing\n"
        "$ reprobridge audit --trust KEYS   # K002",
        "# the envelope as the runner signed it\n$ reprobridge audit --trust KEYS",
    ),
    "K003": (
        _SH,
        "# signed with a key that KEYS does not list\n"
        "$ reprobridge run --sign --key mallory.key\n"
        "$ reprobridge audit --trust KEYS   # K003",
        "$ reprobridge run --sign --key alice.key   # alice's key is in KEYS\n"
        "$ reprobridge audit --trust KEYS",
    ),
    "K004": (
        _SH,
        "# log edited and its digest recomputed in record.json after signing\n"
        "$ reprobridge audit --trust KEYS   # K004: record.json is not the file that was signed",
        "# the signed files unchanged\n$ reprobridge audit --trust KEYS",
    ),
    "K005": (
        _SH,
        "$ cat KEYS\nalice rsa AAAAB3NzaC1yc2E\n"
        "$ reprobridge audit --trust KEYS   # K005 at KEYS:1, exit 2",
        "$ cat KEYS\nalice ed25519 1tWzdY3PKsmm3VxXS6E2LwqTxxn8SErnFuLJbGH+AQ0=",
    ),
    "K006": (
        _SH,
        "$ reprobridge run --sign          # no --key and REPROBRIDGE_SIGNING_KEY unset: K006",
        "$ reprobridge keys generate alice\n$ reprobridge run --sign --key alice.key",
    ),
    "K007": (
        _SH,
        "$ echo '{}' > runs/<run>/record.dsse.json\n$ reprobridge audit --trust KEYS   # K007",
        "# the envelope the runner wrote\n$ reprobridge audit --trust KEYS",
    ),
    # ------------------------------------------------------------------- C: codebase, authoring
    "C001": (
        _SH,
        "$ reprobridge code import git://127.0.0.1:9/none.git   # C001: git's own message",
        "$ reprobridge code import https://github.com/owner/paper.git",
    ),
    "C002": (
        _YAML,
        "codebase:\n  upstream:\n    repository: https://github.com/owner/paper.git\n"
        "    commit: 1111111111111111111111111111111111111111   # not in the upstream: C002",
        "codebase:\n  upstream:\n    repository: https://github.com/owner/paper.git\n"
        "    commit: 3f9c2a7e1b4d5c6e7f8091a2b3c4d5e6f7a8b9c0   # a commit it has",
    ),
    "C003": (
        _SH,
        "# patches/0002-fix.patch changes a line that patch 1 already changed differently\n"
        "$ reprobridge code status   # 2 fails: C003 patch 2 ... at hunk 1 of train.py (line 14)",
        "$ reprobridge code status   # every patch: applies",
    ),
    "C004": (
        _SH,
        "# a patch was edited after it was recorded; tree_digest still names the old tree\n"
        "$ reprobridge run --scope smoke   # C004 at /codebase/tree_digest",
        "$ reprobridge digest --update && reprobridge run --scope smoke",
    ),
    "C005": (
        _SH,
        "# a patch series whose upstream was never fetched on this machine\n"
        "$ reprobridge validate   # C005 (warning) at /codebase/upstream: series not checked",
        "$ reprobridge code status && reprobridge validate   # checked from the cache",
    ),
    "C006": (
        _SH,
        "$ echo '# note' >> code/train.py && reprobridge audit   # C006 (warning)",
        "$ reprobridge code record --kind convenience --why 'A note.' && reprobridge audit",
    ),
    "C007": (
        _SH,
        "$ reprobridge code record --kind execution-fix --why 'x'   # no changes in code/: C007",
        "$ edit code/train.py; reprobridge code record --kind execution-fix --why 'Seed it.'",
    ),
    "C008": (
        _SH,
        "# code/ holds unrecorded changes: running would either lose them or run unrecorded code\n"
        "$ reprobridge validate            # C008 (error) at /codebase/refined\n"
        "$ reprobridge run --scope smoke   # C008, nothing runs",
        "$ reprobridge code record --kind convenience --why '...'; reprobridge run --scope smoke",
    ),
    "C009": (
        _SH,
        "$ reprobridge code import ./paper --commit 3f9c2a7   # an abbreviated id: C009",
        "$ reprobridge code import ./paper --commit v1.0      # a tag: resolved to its commit",
    ),
    "C010": (
        _SH,
        "$ PATH=/nowhere reprobridge code status   # C010: git is not on PATH",
        "$ reprobridge code status",
    ),
    "C011": (
        _SH,
        "# rra.yaml lists a patch that code/ (the checkout) does not hold\n"
        "$ reprobridge code record --kind convenience --why '...'   # C011",
        "$ rm -r code && reprobridge digest && reprobridge code record ...",
    ),
    "C012": (
        _SH,
        "$ reprobridge references add runs/scored-s1-...   # the run failed: C012",
        "$ reprobridge references add runs/scored-s2-...   # succeeded, evidence verified",
    ),
    "C013": (
        _SH,
        "# the run was made before the last `code record`\n"
        "$ reprobridge references add runs/scored-s1-...   # C013",
        "$ reprobridge run --scope scored && reprobridge references add runs/<new run>",
    ),
    "C014": (
        _SH,
        "$ reprobridge references add runs/smoke-...   # a smoke run measures nothing: C014",
        "$ reprobridge references add runs/scored-s1-...",
    ),
    "C015": (
        _SH,
        "# statistic: {aggregate: mean, seeds: 3}\n"
        "$ reprobridge references add runs/scored-s1-...   # one run: C015",
        "$ reprobridge run --scope scored --runs-dir reps/1   # seeds 1, 2, 3\n"
        "$ reprobridge references add reps/1   # one repetition, one observation",
    ),
    "C020": (
        _SH,
        "$ reprobridge run --scope scored --seeds 1,2 --runs-dir reps/1\n"
        "$ reprobridge references add reps/1   # seed 3 is missing: C020",
        "$ reprobridge run --scope scored --runs-dir reps/1   # every declared seed\n"
        "$ reprobridge references add reps/1",
    ),
    "C021": (
        _SH,
        "$ reprobridge run --scope scored --seeds 1,2,7 --runs-dir reps/1\n"
        "$ reprobridge references add reps/1   # seed 7 is not declared: C021",
        "$ reprobridge run --scope scored --runs-dir reps/1\n$ reprobridge references add reps/1",
    ),
    "C022": (
        _SH,
        "$ reprobridge run --scope scored --runs-dir reps/1   # twice into one folder\n"
        "$ reprobridge references add reps/1   # each seed ran twice: C022",
        "$ reprobridge run --scope scored --runs-dir reps/1\n"
        "$ reprobridge run --scope scored --runs-dir reps/2\n"
        "$ reprobridge references add reps/1 reps/2   # two repetitions",
    ),
    "C023": (
        _SH,
        "$ reprobridge references add reps/1 reps   # reps/ holds reps/1 again: C023",
        "$ reprobridge references add reps/1 reps/2",
    ),
    "C016": (
        _SH,
        "# code/ came from `reprobridge init`, not from `code import`\n"
        "$ reprobridge code record --kind convenience --why '...'   # C016",
        "$ reprobridge code import ../paper --force && reprobridge code record ...",
    ),
    "C017": (
        _SH,
        "$ reprobridge unpack evil.tar out/   # a member named ../../.bashrc: C017",
        "$ reprobridge unpack tiny.tar.gz out/   # every member inside out/",
    ),
    "C018": (
        _SH,
        "$ reprobridge unpack tiny.tar.gz existing-folder/   # not empty: C018",
        "$ reprobridge unpack tiny.tar.gz new-folder/",
    ),
    "C019": (
        _SH,
        "$ reprobridge unpack tiny.tar.gz out/ --digest sha256:0000...   # C019",
        "$ reprobridge unpack tiny.tar.gz out/ --digest sha256:<the digest pack printed>",
    ),
    "C024": (
        _SH,
        "# the archive's upstream/<commit>.bundle was changed after packing\n"
        "$ reprobridge check tiny.tar.gz   # C024 at /codebase/upstream/bundle",
        "$ reprobridge pack -o tiny.tar.gz && reprobridge check tiny.tar.gz",
    ),
    "C025": (
        _SH,
        "# upstream/<commit>.bundle is cut short (or holds only part of the history)\n"
        "$ reprobridge run --scope smoke   # C025 at /codebase/upstream/bundle",
        "$ reprobridge pack -o tiny.tar.gz   # bundles the whole history of the pinned commit",
    ),
    "C026": (
        _SH,
        "# upstream/<commit>.bundle holds main and a tag, or another commit than the pinned one\n"
        "$ reprobridge validate   # C026 at /codebase/upstream/bundle",
        "$ reprobridge pack -o tiny.tar.gz   # one ref: refs/rra/<commit>, the pinned commit",
    ),
    "C027": (
        _SH,
        "# reps/1 and reps/2 hold seeds 1-3 each; both runs of every seed wrote the same bytes\n"
        "$ reprobridge references add reps/1 reps/2   # C027 at /launchers/1/deterministic",
        "# the launcher declares 'deterministic: true', or one seed's two runs differ\n"
        "$ reprobridge references add reps/1 reps/2",
    ),
    # ------------------------------------------------------------------- P: placeholders
    "P001": (
        _YAML,
        "artifact:\n  paper:\n    title: Replace with the paper's title   # P001",
        "artifact:\n  paper:\n    title: Linear baselines for digit classification",
    ),
    "P002": (
        _YAML,
        "tasks:\n  - id: main-result\n    dataset: synthetic draws (placeholder)   # P002",
        "tasks:\n  - id: main-result\n    dataset: scikit-learn digits (1,797 images)",
    ),
    "P003": (
        _YAML,
        "codebase:\n  upstream:\n    commit: '0000000000000000000000000000000000000000'  # P003",
        "codebase:\n  upstream:\n    commit: 3f9c2a7e1b4d5c6e7f8091a2b3c4d5e6f7a8b9c0",
    ),
    "P004": (
        _YAML,
        "codebase:\n  upstream:\n"
        "    repository: https://example.org/replace-me/upstream.git  # P004",
        "codebase:\n  upstream:\n    repository: https://github.com/owner/paper.git",
    ),
    "P005": (
        _YAML,
        "observations:\n  - value: 0.901\n    provenance: {source: reprobridge init}   # P005",
        "observations:\n  - value: 0.901\n    provenance: {source: reference run, run: scored-s1}",
    ),
    "P006": (
        _SH,
        "# samples/scored-seed1.log is still the log `reprobridge init` wrote\n"
        "$ reprobridge validate   # P006 at /launchers/1/samples/0/log",
        "$ cp runs/scored-s1-.../log.txt samples/scored-seed1.log   # a real run's log",
    ),
}
