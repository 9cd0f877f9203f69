// Validate JSON instances against a JSON Schema with ajv in strict mode (draft 2020-12).
// Usage: node ajv_validate.js SCHEMA.json < instances.json   (a JSON array of instances)
// Prints a JSON array of booleans, one per instance. Exit 2 if the schema does not compile.
// The format's one custom annotation, x-rra-since (the version that added a field), is
// declared as a keyword so that strict mode, which rejects unknown keywords, accepts it.
"use strict";
const fs = require("fs");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;

const schema = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const ajv = new Ajv2020({ strict: true, strictTypes: true, allErrors: false });
addFormats(ajv);
ajv.addKeyword({ keyword: "x-rra-since", schemaType: "string" });
let validate;
try {
  validate = ajv.compile(schema);
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const instances = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(instances.map((instance) => validate(instance))) + "\n");
