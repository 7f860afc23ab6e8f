/**
 * Every seam's service key, declared once: a plugin or provider finds a
 * service by its key, never by importing a provider. Keep one line per seam.
 */
import type { FileSystem } from './fs.js';
import { serviceKey } from './service.js';
import type { Subprocess } from './subprocess.js';

/** The file system every file tool goes through (`adapters/fs/`). */
export const FS = serviceKey<FileSystem>('fs');
/** The subprocess seam bash goes through (`adapters/subprocess/`). */
export const SUBPROCESS = serviceKey<Subprocess>('subprocess');
