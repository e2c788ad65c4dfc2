// zod's functional build (`zod/mini`) speaks English: imported for this effect by the modules that
// validate with zod, before they build a schema. `zod/mini` carries no locale of its own (every
// issue would read "Invalid input"); the bundles tree-shake it to what the schemas use (about
// 25 KB, where the chained `zod` brings about 460 KB that every cold start of the Lambda and every
// CLI start would compile). The modules import `zod/mini` as a namespace and only read from it,
// which is what lets esbuild drop the rest: do not re-export that namespace.
import { config } from 'zod/mini';
import { en } from 'zod/locales';

config(en());
