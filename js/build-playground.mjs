// Bundles chat.mjs (and the parts of `ai` it uses) into the playground's static files, so users of
// `agentkit dev` need no build step. Run after changing chat.mjs or the pinned `ai` version:
//   npm ci --prefix js && node js/build-playground.mjs
// and commit agentkit/playground/static/vendor/ai-chat.js. With an argument, writes there instead (the
// tests rebuild into a temporary file and compare, so a stale bundle fails them).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? join(here, '../agentkit/playground/static/vendor/ai-chat.js');
const version = JSON.parse(readFileSync(join(here, 'node_modules/ai/package.json'), 'utf8')).version;

await build({
  entryPoints: [join(here, 'chat.mjs')],
  outfile: out,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  banner: { js: `// Built by js/build-playground.mjs from js/chat.mjs and the npm package ai@${version}. Do not edit.` },
});
console.log(`bundled ai@${version} into ${out}`);
