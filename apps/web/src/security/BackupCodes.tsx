import { Alert, Button, Code, CopyButton, Group, SimpleGrid, Stack, Text } from '@mantine/core';

/** Saves the codes as a text file through the browser's download manager (a local blob, nothing is fetched). */
function downloadCodes(codes: string[]) {
  const text = `Holdfast backup codes (${new Date().toISOString().slice(0, 10)})\nEach code works once.\n\n${codes.join('\n')}\n`;
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = 'holdfast-backup-codes.txt';
  link.click();
  // The download has started by the time the click returns; the blob is not needed after that.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The ten single-use backup codes, shown once after enrollment or regeneration, with copy and download. */
export function BackupCodes({ codes, onDone }: { codes: string[]; onDone(): void }) {
  return (
    <Alert color="yellow" title="Save your backup codes now" data-testid="backup-codes">
      <Stack gap="sm">
        <Text size="sm">
          Each code signs you in once when your authenticator app is not at hand. They are shown only this once; keep them somewhere safe and
          offline.
        </Text>
        <SimpleGrid cols={{ base: 2, sm: 5 }} spacing="xs">
          {codes.map((code) => (
            <Code key={code} data-testid="backup-code" fz="sm">
              {code}
            </Code>
          ))}
        </SimpleGrid>
        <Group gap="xs">
          <CopyButton value={codes.join('\n')}>
            {({ copied, copy }) => (
              <Button size="xs" variant="default" onClick={copy}>
                {copied ? 'Copied' : 'Copy codes'}
              </Button>
            )}
          </CopyButton>
          <Button size="xs" variant="default" onClick={() => downloadCodes(codes)} data-testid="download-backup-codes">
            Download as text
          </Button>
          <Button size="xs" onClick={onDone}>
            I have saved them
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
