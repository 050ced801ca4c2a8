import { secret, z } from '@holdfast/sdk';

/** Config of a WebDAV destination. */
export const webdavStorageConfig = z.object({
  url: z
    .string()
    .trim()
    .url('url must be an http:// or https:// URL')
    .refine((value) => /^https?:\/\//i.test(value), 'url must start with http:// or https://')
    .refine((value) => !/^https?:\/\/[^/]*@/i.test(value), 'put the username and password in their own fields, not in the url')
    .describe('WebDAV endpoint, e.g. https://cloud.example.com/remote.php/dav/files/alice (Nextcloud) or https://nas.example.com/dav'),
  username: z.string().trim().min(1, 'username is required').describe('Login name'),
  password: secret(z.string().min(1, 'password is required').describe('Password (for Nextcloud, an app password)')),
  authType: z
    .enum(['basic', 'digest'])
    .default('basic')
    .describe('HTTP authentication scheme the server expects: basic (use it over https) or digest'),
  root: z
    .string()
    .trim()
    .default('/')
    .refine((value) => !value.split('/').some((segment) => segment === '.' || segment === '..'), 'root must not contain . or .. segments')
    .describe('Folder below the url that holds the backups, e.g. /backups/holdfast; "/" is the url itself. It must exist.'),
  rejectUnauthorized: z
    .boolean()
    .default(true)
    .describe('Verify the https certificate; turn off only for a self-signed certificate on a trusted network'),
  timeoutSeconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(600)
    .default(30)
    .describe('Timeout of metadata requests (PROPFIND, MKCOL, MOVE, DELETE) in seconds; transfers are not limited'),
});

/** Parsed config of {@link webdavStorageConfig}. */
export type WebdavStorageConfig = z.output<typeof webdavStorageConfig>;
