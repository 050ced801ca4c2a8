/** Titles of pages that are not navigation entries; the navigation's labels name the others. */
const EXTRA_TITLES: ReadonlyArray<{ path: string; title: string }> = [
  { path: '/jobs/new', title: 'New job' },
  { path: '/jobs/', title: 'Job' },
  { path: '/runs/', title: 'Run' },
  { path: '/adapters/new/', title: 'New connection' },
  { path: '/adapters/', title: 'Connection' },
  { path: '/settings/sso/', title: 'Single sign-on provider' },
  { path: '/profile/security', title: 'Sign-in security' },
  { path: '/profile', title: 'Profile' },
];

/** The document title of a path: "<page> · Holdfast" (issue 47: every tab read "Holdfast"). */
export function pageTitle(pathname: string, navLabel: string | undefined): string {
  const extra = EXTRA_TITLES.find((entry) => (entry.path.endsWith('/') ? pathname.startsWith(entry.path) : pathname === entry.path));
  const name = extra?.title ?? navLabel;
  return name ? `${name} · Holdfast` : 'Holdfast';
}
