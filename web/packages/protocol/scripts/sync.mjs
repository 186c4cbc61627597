// Copies the TypeScript definitions generated from the qilin-protocol crate into this package.
// Run after `QILIN_UPDATE_BINDINGS=1 cargo test -p qilin-protocol typescript`:
//   npm run sync-protocol          (from web/)
import { copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../../../../bindings/qilin-protocol.ts', import.meta.url));
const to = fileURLToPath(new URL('../src/generated.ts', import.meta.url));
copyFileSync(from, to);
console.log(`copied ${from} to ${to}`);
