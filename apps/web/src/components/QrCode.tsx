import { create } from 'qrcode';
import { useMemo } from 'react';

/** Modules of white border around the symbol: the quiet zone scanners need (ISO/IEC 18004). */
const QUIET_ZONE = 4;

/**
 * A QR code drawn as an SVG path from the `qrcode` library's module matrix. Drawn in React (no data URL, no
 * innerHTML) so the page's CSP stays strict; always dark on white, because scanners need that contrast in dark
 * mode too.
 */
export function QrCode({ value, size = 200, label }: { value: string; size?: number; label: string }) {
  const { path, extent } = useMemo(() => {
    const { modules } = create(value, { errorCorrectionLevel: 'M' });
    let d = '';
    for (let row = 0; row < modules.size; row++) {
      for (let col = 0; col < modules.size; col++) {
        if (modules.get(row, col)) d += `M${col + QUIET_ZONE} ${row + QUIET_ZONE}h1v1h-1z`;
      }
    }
    return { path: d, extent: modules.size + QUIET_ZONE * 2 };
  }, [value]);
  return (
    <svg role="img" aria-label={label} width={size} height={size} viewBox={`0 0 ${extent} ${extent}`} shapeRendering="crispEdges" data-testid="qr-code">
      <rect width={extent} height={extent} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
