import { useEffect, useState } from "preact/hooks";
import { hexDump } from "../lib/format";

/** A message or response body: text as text (JSON pretty-printed), bytes as a hex dump with a download. */
export function BodyView({ text, base64, name }: { text?: string | undefined; base64?: string | undefined; name: string }) {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    if (base64 === undefined) return;
    const bin = atob(base64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const u = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
    setUrl(u);
    return () => URL.revokeObjectURL(u);
  }, [base64]);
  if (base64 !== undefined) {
    return (
      <div>
        <pre class="code">{hexDump(base64)}</pre>
        {url && (
          <a class="btn small" href={url} download={`${name}.bin`}>
            Download bytes
          </a>
        )}
      </div>
    );
  }
  if (text === undefined || text === "") return <p class="muted">Empty body.</p>;
  let shown = text;
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON: shown as sent.
  }
  return <pre class="code">{shown}</pre>;
}
