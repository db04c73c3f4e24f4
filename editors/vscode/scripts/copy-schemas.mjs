// Copies the repository's JSON schemas (../../schemas/*.json, or $TRAINLINT_SCHEMAS_DIR) into
// ./schemas so that `vsce package` ships them, and the repository LICENSE when there is one.
// Fails when a schema that package.json points at (jsonValidation / yamlValidation) is missing.
// The copies are build outputs (see .gitignore); the repository's schemas/ stays the only source.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const extensionDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = resolve(extensionDir, '..', '..');
const source = resolve(process.env.TRAINLINT_SCHEMAS_DIR || join(repoDir, 'schemas'));
const target = join(extensionDir, 'schemas');

function fail(message) {
  console.error(`copy-schemas: ${message}`);
  process.exit(1);
}

if (!existsSync(source)) {
  fail(`no schema folder at ${source} (set TRAINLINT_SCHEMAS_DIR to point elsewhere)`);
}

rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
const copied = [];
for (const name of readdirSync(source).sort()) {
  if (!name.endsWith('.json')) continue;
  const text = readFileSync(join(source, name), 'utf8');
  try {
    JSON.parse(text);
  } catch (err) {
    fail(`${join(source, name)} is not valid JSON: ${err.message}`);
  }
  copyFileSync(join(source, name), join(target, name));
  copied.push(name);
}

const manifest = JSON.parse(readFileSync(join(extensionDir, 'package.json'), 'utf8'));
const contributes = manifest.contributes ?? {};
const wanted = [...(contributes.jsonValidation ?? []), ...(contributes.yamlValidation ?? [])]
  .map((entry) => entry.url)
  .filter((url) => typeof url === 'string' && url.startsWith('./schemas/'));
const missing = wanted.filter((url) => !existsSync(join(extensionDir, url)));
if (missing.length > 0) {
  fail(`package.json points at ${missing.join(', ')}, but ${source} has no such file (found: ${copied.join(', ') || 'none'})`);
}

const license = join(repoDir, 'LICENSE');
if (existsSync(license)) {
  copyFileSync(license, join(extensionDir, 'LICENSE'));
}
console.log(`copy-schemas: ${copied.length} schema(s) from ${source}: ${copied.join(', ')}`);
