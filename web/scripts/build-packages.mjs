// Builds every package under packages/ to ESM JavaScript with type declarations in its `dist/`
// (what its `exports` point at outside this workspace; inside it, the `qilin-source` condition
// reads the TypeScript source): one `tsc` over all of them (tsconfig.packages.json), relative
// imports given the `.js` file they name (so Node and any bundler load them as they are), and the
// CSS copied beside. Then checks what a package's consumer would trip on: an export whose file
// is missing, and an import of a package the package does not declare.
//
// Usage: node scripts/build-packages.mjs
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(web, '.packages-build');
const packages = readdirSync(join(web, 'packages')).filter((name) =>
  existsSync(join(web, 'packages', name, 'package.json')),
);

/** Every file under `folder`, recursively. */
function filesUnder(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** A relative specifier with the `.js` file it means (`./a` → `./a.js` or `./a/index.js`). */
function withExtension(file, specifier) {
  if (/\.(js|css|json)$/.test(specifier)) return specifier;
  const base = join(dirname(file), specifier);
  if (existsSync(`${base}.js`)) return `${specifier}.js`;
  if (existsSync(join(base, 'index.js'))) return `${specifier}/index.js`;
  throw new Error(`${relative(web, file)}: the import '${specifier}' names no built file`);
}

// Specifiers in `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`.
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"\n]+)\2/g;

/** Gives every relative import of a built file the file it names. */
function rewriteImports(file) {
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(SPECIFIER, (whole, head, quote, specifier) =>
    specifier.startsWith('.') ? `${head}${quote}${withExtension(file, specifier)}${quote}` : whole,
  );
  if (rewritten !== text) writeFileSync(file, rewritten);
}

/** The package a bare specifier names: `a/b` → `a`, `@s/a/b` → `@s/a`. */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Problems a consumer of `name`'s build would meet: undeclared imports, missing exports. */
function problemsOf(name) {
  const folder = join(web, 'packages', name);
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  const declared = new Set([
    manifest.name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  const problems = [];
  for (const file of filesUnder(join(folder, 'dist'))) {
    if (!/\.(js|d\.ts)$/.test(file)) continue;
    for (const [, , , specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
      const owner = packageOf(specifier);
      if (builtinModules.includes(owner)) continue;
      // A type-only import is declared by its `@types` package.
      const types = `@types/${owner.replace(/^@/, '').replace('/', '__')}`;
      if (declared.has(owner) || (file.endsWith('.d.ts') && declared.has(types))) continue;
      problems.push(`${relative(web, file)} imports '${specifier}', not in its dependencies`);
    }
  }
  for (const [subpath, targets] of Object.entries(manifest.exports ?? {})) {
    if (typeof targets !== 'object' || targets === null) {
      problems.push(
        `${manifest.name} exports '${subpath}' as ${JSON.stringify(targets)}: give it the` +
          ` conditions 'qilin-source' (src/), then 'types' and 'default' (dist/)`,
      );
      continue;
    }
    for (const [condition, target] of Object.entries(targets)) {
      if (condition === 'qilin-source') continue;
      if (!existsSync(join(folder, target))) {
        problems.push(
          `${manifest.name} exports '${subpath}' (${condition}) as ${target}, not built`,
        );
      }
    }
  }
  return problems;
}

rmSync(out, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(web, 'tsconfig.packages.json')], {
  stdio: 'inherit',
});
const problems = [];
for (const name of packages) {
  const source = join(web, 'packages', name, 'src');
  const dist = join(web, 'packages', name, 'dist');
  rmSync(dist, { recursive: true, force: true });
  renameSync(join(out, name, 'src'), dist);
  for (const file of filesUnder(dist)) rewriteImports(file);
  for (const file of filesUnder(source).filter((path) => path.endsWith('.css'))) {
    cpSync(file, join(dist, relative(source, file)));
  }
  problems.push(...problemsOf(name));
}
rmSync(out, { recursive: true, force: true });
if (problems.length > 0) {
  console.error(`The packages' build is not usable as it is:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`Built ${packages.length} packages: ${packages.join(', ')}`);
