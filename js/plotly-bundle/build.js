// Builds ../../static/plotly-primer.min.js: plotly.js's core (which holds scatter) and the other trace types the
// dashboard's charts use, with the esbuild settings plotly.js builds its own dist bundles with (esbuild-config.js).
// Run: npm ci && npm run build. tests/app/test_plotly_bundle.py checks the result against this list and the app.
const crypto = require('crypto');
const esbuild = require('esbuild');
const fs = require('fs');
const path = require('path');
const { environmentPlugin } = require('esbuild-plugin-environment');
const { glsl } = require('esbuild-plugin-glsl');
const { version } = require('plotly.js/package.json');

// plotly.js's stylesheet, injected by the bundle as one <style> element (what esbuild-plugin-inline-css does, with the
// element's id hashed from the file's path inside this folder instead of the absolute one, so that a build anywhere
// gives the same bytes).
const inlineCss = {
  name: 'inline-css',
  setup(build) {
    build.onLoad({ filter: /\.css$/ }, (args) => {
      const id = crypto.createHash('sha256').update(path.relative(__dirname, args.path)).digest('hex');
      const css = JSON.stringify(fs.readFileSync(args.path, 'utf8'));
      const contents = `if (!document.getElementById('${id}')) { var e = document.createElement('style'); e.id = '${id}'; e.textContent = ${css}; document.head.appendChild(e); }`;
      return { contents, loader: 'js' };
    });
  },
};

const TRACES = ['scatter', 'bar', 'heatmap', 'sankey'];
const entry = [
  "var Plotly = require('plotly.js/lib/core');",
  `Plotly.register([${TRACES.filter((t) => t !== 'scatter').map((t) => `require('plotly.js/lib/${t}')`).join(', ')}]);`,
  'module.exports = Plotly;',
].join('\n');
const banner = [
  '/**',
  `* plotly.js v${version}, primer bundle (traces: ${TRACES.join(', ')})`,
  '* Copyright 2012-2026, Plotly, Inc.',
  '* All rights reserved.',
  '* Licensed under the MIT license',
  '*/',
].join('\n');

esbuild
  .build({
    stdin: { contents: entry, resolveDir: __dirname, sourcefile: 'primer-bundle.js' },
    outfile: path.join(__dirname, '..', '..', 'static', 'plotly-primer.min.js'),
    format: 'iife',
    globalName: 'Plotly',
    bundle: true,
    minify: true,
    legalComments: 'none',
    banner: { js: banner },
    plugins: [inlineCss, glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
    alias: { regl: '@plotly/regl', stream: 'stream-browserify' },
    define: { global: 'window', 'define.amd': 'false' },
    target: 'es2016',
    logLevel: 'info',
  })
  .catch(() => process.exit(1));
