import { useEffect, useState } from "preact/hooks";
import { hexDump, utf8Of } from "../lib/format";

/**
 * A message or response body: text as text (JSON pretty-printed), bytes as a hex dump with a download. `base64`
 * bodies (as logs carry them) that are valid UTF-8 are shown as text too.
 */
export function BodyView({ text, base64, name }: { text?: string | undefined; base64?: string | undefined; name: string }) {
  const decoded = base64 === undefined ? undefined : utf8Of(base64);
  if (decoded !== undefined) return <TextBody text={decoded} />;
  return <RawBody text={text} base64={base64} name={name} />;
}

function RawBody({ text, base64, name }: { text?: string | undefined; base64?: string | undefined; name: string }) {
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
  return <TextBody text={text} />;
}

function TextBody({ text }: { text: string | undefined }) {
  if (text === undefined || text === "") return <p class="muted">Empty body.</p>;
  let shown = text;
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON: shown as sent.
  }
  return <pre class="code">{shown}</pre>;
}
