/**
 * Bundles the report view for pages with no JupyterLab extension (Colab, VS Code,
 * the classic notebook, saved pages, `report.save()`): `lib/standalone.js` (from
 * `src/standalone.ts`, compiled by tsc) and everything it imports, CodeMirror
 * included, and the styles (`style/base.css`, `style/standalone.css`), into ONE
 * self-contained script, `olympus_jupyter/static/viewer.js` (build output,
 * ignored by git), that the Python package inlines into a report's HTML.
 *
 * The view takes its editor theme, search keys and Python language from
 * `host.ts`, which imports JupyterLab's shared CodeMirror; here `host_standalone.ts`
 * takes its place, so that no JupyterLab package is bundled.
 *
 * The script goes inside `<script>` elements: the build fails if it holds
 * `<script`, `</script` or `<!--` (which would end or confuse the element), or a
 * `fetch`/`XMLHttpRequest`/`import(` that could reach the network.
 *
 * Run by `jlpm build:lib` and `jlpm build:lib:prod` after `tsc`;
 * `node scripts/build-standalone.mjs --watch` (in `jlpm watch`) rebuilds as
 * `tsc -w` writes lib/ (the styles are read when it starts).
 *
 *     node scripts/build-standalone.mjs [--watch] [OUT.js]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const watch = args.includes('--watch');
const out = path.resolve(
  args.find(a => !a.startsWith('--')) ??
    path.join(root, 'olympus_jupyter', 'static', 'viewer.js')
);

async function styles() {
  const css = ['base.css', 'standalone.css']
    .map(f => fs.readFileSync(path.join(root, 'style', f), 'utf8'))
    .join('\n');
  const { code } = await esbuild.transform(css, {
    loader: 'css',
    minify: true
  });
  return code;
}

/** `./host` (JupyterLab's CodeMirror) becomes `./host_standalone` (CodeMirror's own). */
const standaloneHost = {
  name: 'standalone-host',
  setup(build) {
    build.onResolve({ filter: /^\.\/host(\.js)?$/ }, a => ({
      path: path.join(a.resolveDir, 'host_standalone.js')
    }));
  }
};

/** What must not be in a script inlined into HTML, nor in a view that loads nothing. */
const FORBIDDEN = [
  [/<\/?script/i, 'a <script or </script tag'],
  [/<!--/, 'an HTML comment opener <!--'],
  [/\bXMLHttpRequest\b|\bfetch\(|\bimport\(|\bWebSocket\b/, 'a network call']
];

/** Fails the build when the bundle cannot be inlined safely or would load anything. */
const checks = {
  name: 'inline-checks',
  setup(build) {
    build.onEnd(result => {
      if (result.errors.length) {
        return;
      }
      const text = fs.readFileSync(out, 'utf8');
      for (const [re, what] of FORBIDDEN) {
        const m = re.exec(text);
        if (m) {
          const at = text.slice(Math.max(0, m.index - 60), m.index + 60);
          fs.rmSync(out);
          throw new Error(`${out} holds ${what}: …${at}…`);
        }
      }
      const kb = (fs.statSync(out).size / 1024).toFixed(0);
      console.log(`standalone view: ${path.relative(root, out)} (${kb} kB)`);
    });
  }
};

const css = await styles();
const options = {
  entryPoints: [path.join(root, 'lib', 'standalone.js')],
  outfile: out,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2020'],
  minify: true,
  // Plain ASCII: the file reads the same whatever encoding a page declares.
  charset: 'ascii',
  legalComments: 'eof',
  define: {
    OLYMPUS_CSS: JSON.stringify(css),
    OLYMPUS_CSS_ID: JSON.stringify(
      crypto.createHash('sha256').update(css).digest('hex').slice(0, 12)
    )
  },
  plugins: [standaloneHost, checks],
  logLevel: 'warning'
};

fs.mkdirSync(path.dirname(out), { recursive: true });
if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
