import { useMutation, useQueryClient } from '@tanstack/react-query';

/** Refetches every query under a key, so a list shows what a save or delete just changed. */
export function useInvalidate(queryKey: readonly unknown[]) {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey });
}

/** Deletes one record by id, then refreshes its list. */
export function useDeleteRecord(queryKey: readonly unknown[], deleteRecord: (id: string) => Promise<unknown>) {
  const invalidate = useInvalidate(queryKey);
  return useMutation({ mutationFn: deleteRecord, onSuccess: invalidate });
}

/** Saves a record (create or update), waits for its list to refresh, then closes the editor. */
export function useSaveRecord<TResult, TVariables = void>(queryKey: readonly unknown[], saveRecord: (variables: TVariables) => Promise<TResult>, onDone: (result: TResult) => void) {
  const invalidate = useInvalidate(queryKey);
  return useMutation({
    mutationFn: saveRecord,
    onSuccess: async (result) => {
      await invalidate();
      onDone(result);
    },
  });
}
