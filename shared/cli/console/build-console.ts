/**
 * `npm run build`'s last step: the console page's script and style sheet bundled into `dist/`, beside the compiled
 * console, where the published `outbox console` serves them from.
 */
import { writeConsoleBundle } from './console-assets.ts';

const { files } = await writeConsoleBundle(process.argv[2] ?? 'dist/shared/cli/console/web');
process.stdout.write(`console bundle: ${files.join(', ')}\n`);
