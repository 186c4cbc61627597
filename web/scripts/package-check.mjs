// Proves the packages work outside this workspace: builds them (scripts/build-packages.mjs),
// packs each with `npm pack`, installs the tarballs into a fresh app in a temporary folder, and
// there type-checks and runs package-check/check.tsx, which renders recorded calls through
// `ToolCallTree` by the packages' published names.
//
// No network: the fresh app gets a lockfile made from web/package-lock.json (the versions and
// integrity this workspace's `npm ci` put in npm's cache) and the tarballs' own, so
// `npm ci --offline` takes everything from the cache.
//
// Usage: node scripts/package-check.mjs   (QILIN_KEEP_PACKAGE_CHECK=1 keeps the folder)
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// What the fresh app needs besides the packages: React to render, types to check it.
const APP_DEPENDENCIES = ['react', 'react-dom', '@types/react', '@types/react-dom', '@types/node'];
const FIXTURES = ['code-mode', 'shell'];

/** Runs a command in `cwd`, its output shown only when it fails; returns its standard output. */
function run(command, args, cwd) {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd}:\n${error.stdout}${error.stderr}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * The entries of `lock` (web/package-lock.json) that `roots` (`[from, name]`: a package needed
 * from the lock's path `from`, '' for the app) need: each package where Node finds it from
 * there, and what it needs in turn.
 */
function closureOf(lock, roots) {
  const entries = {};
  const pending = roots.map(([from, name]) => ({ from, name, optional: false }));
  while (pending.length > 0) {
    const { from, name, optional } = pending.pop();
    let place;
    for (let folder = from; ; folder = folder.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '')) {
      const candidate = `${folder === '' ? '' : `${folder}/`}node_modules/${name}`;
      if (lock.packages[candidate] !== undefined) {
        place = candidate;
        break;
      }
      if (folder === '') break;
    }
    if (place === undefined) {
      if (optional) continue;
      throw new Error(`web/package-lock.json has no ${name} (needed from '${from || 'the app'}')`);
    }
    if (entries[place] !== undefined) continue;
    // The workspace's flags (`dev`) say nothing about the fresh app, which needs all of it.
    const entry = { ...lock.packages[place] };
    delete entry.dev;
    delete entry.devOptional;
    entries[place] = entry;
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    for (const dependency of Object.keys(entry.dependencies ?? {})) {
      pending.push({ from: place, name: dependency, optional: false });
    }
    for (const dependency of Object.keys(entry.optionalDependencies ?? {})) {
      pending.push({ from: place, name: dependency, optional: true });
    }
    for (const dependency of Object.keys(entry.peerDependencies ?? {})) {
      pending.push({
        from: place,
        name: dependency,
        optional: optionalPeers[dependency]?.optional === true,
      });
    }
  }
  return entries;
}

const started = Date.now();
run(process.execPath, [join(web, 'scripts/build-packages.mjs')], web);
const folder = mkdtempSync(join(tmpdir(), 'qilin-packages-'));
let passed = false;
try {
  const packs = join(folder, 'packs');
  const app = join(folder, 'app');
  mkdirSync(packs);
  mkdirSync(app);
  const lock = JSON.parse(readFileSync(join(web, 'package-lock.json'), 'utf8'));
  const names = readdirSync(join(web, 'packages'));
  const reports = JSON.parse(
    run(
      npm,
      [
        'pack',
        '--json',
        '--pack-destination',
        packs,
        ...names.flatMap((name) => ['--workspace', `packages/${name}`]),
      ],
      web,
    ),
  );
  const packed = names.map((name) => {
    const manifest = JSON.parse(readFileSync(join(web, 'packages', name, 'package.json'), 'utf8'));
    const report = reports.find((each) => each.name === manifest.name);
    if (report === undefined) throw new Error(`npm pack did not pack ${manifest.name}`);
    return { manifest, report };
  });
  const packages = Object.fromEntries(
    packed.map(({ manifest, report }) => [
      `node_modules/${manifest.name}`,
      {
        version: manifest.version,
        resolved: `file:../packs/${report.filename}`,
        integrity: report.integrity,
        license: manifest.license,
        ...(manifest.dependencies === undefined ? {} : { dependencies: manifest.dependencies }),
        ...(manifest.peerDependencies === undefined
          ? {}
          : { peerDependencies: manifest.peerDependencies }),
      },
    ]),
  );
  const thirdParty = [
    ...APP_DEPENDENCIES,
    ...packed.flatMap(({ manifest }) =>
      Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }),
    ),
  ].filter((name) => !name.startsWith('@qilin-agent/'));
  Object.assign(
    packages,
    closureOf(
      lock,
      thirdParty.map((name) => ['', name]),
    ),
  );
  const dependencies = {
    ...Object.fromEntries(
      packed.map(({ manifest, report }) => [manifest.name, `file:../packs/${report.filename}`]),
    ),
    ...Object.fromEntries(
      APP_DEPENDENCIES.map((name) => [name, lock.packages[`node_modules/${name}`].version]),
    ),
  };
  const manifest = { name: 'qilin-package-check', private: true, type: 'module', dependencies };
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(
    join(app, 'package-lock.json'),
    JSON.stringify(
      {
        name: manifest.name,
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: manifest.name, dependencies }, ...packages },
      },
      null,
      2,
    ),
  );
  run(npm, ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], app);

  cpSync(join(web, 'package-check/check.tsx'), join(app, 'check.tsx'));
  for (const fixture of FIXTURES) {
    cpSync(join(web, 'fixtures', `${fixture}.jsonl`), join(app, `${fixture}.jsonl`));
  }
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        jsx: 'react-jsx',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        outDir: 'out',
      },
      files: ['check.tsx'],
    }),
  );
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  run(process.execPath, [tsc, '-p', join(app, 'tsconfig.json')], app);
  for (const fixture of FIXTURES) {
    cpSync(join(app, `${fixture}.jsonl`), join(app, 'out', `${fixture}.jsonl`));
  }
  process.stdout.write(run(process.execPath, [join(app, 'out', 'check.js')], app));
  passed = true;
  console.log(
    `Packed ${packed.length} packages, installed them offline in a fresh app and rendered` +
      ` from it (${((Date.now() - started) / 1000).toFixed(1)} s).`,
  );
} finally {
  if (passed && process.env.QILIN_KEEP_PACKAGE_CHECK === undefined) {
    rmSync(folder, { recursive: true, force: true });
  } else {
    console.error(`The fresh app is kept in ${folder}`);
  }
}
