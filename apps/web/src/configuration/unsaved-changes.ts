import { useCallback, useEffect, useRef } from 'react';
import { useBlocker } from 'react-router';

export const UNSAVED_CHANGES_QUESTION = 'This form has changes that are not saved. Leave the page and lose them?';

/**
 * Asks before an edit form with unsaved changes is left (issue 47, item 6): a link inside the app asks with a
 * confirm dialog; closing or reloading the tab gets the browser's own question (its text cannot be chosen).
 * Returns `release`, called right before the page itself navigates away after a save or delete: that navigation
 * happens before the next render could see the form as saved.
 */
export function useUnsavedChangesGuard(isDirty: boolean): () => void {
  const released = useRef(false);
  const blocker = useBlocker(({ currentLocation, nextLocation }) => !released.current && isDirty && currentLocation.pathname !== nextLocation.pathname);
  // Released for one navigation only: a page that stays mounted (a clone opens in the same editor) guards again.
  useEffect(() => {
    if (!isDirty) released.current = false;
  }, [isDirty]);
  useEffect(() => {
    if (blocker.state !== 'blocked') return;
    if (window.confirm(UNSAVED_CHANGES_QUESTION)) blocker.proceed();
    else blocker.reset();
  }, [blocker]);
  useEffect(() => {
    if (!isDirty) return;
    const warn = (event: BeforeUnloadEvent) => {
      // Released by a save or delete: the page may still be mounted (the router renders the next page in a
      // transition) when the browser unloads, and a saved form has nothing to lose.
      if (released.current) return;
      event.preventDefault();
      // Older browsers show the question only when returnValue is set.
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [isDirty]);
  return useCallback(() => {
    released.current = true;
  }, []);
}
