/** Times in the browser's zone for reading; the exact UTC instant for the hover title. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  const sameDay = new Date().toDateString() === d.toDateString();
  return sameDay
    ? d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" })
    : d.toLocaleString(undefined, {
        year: "numeric",
        month: "short",
        day: "numeric",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
      });
}

export function utcTime(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
}

/** "in 3 min", "5 s ago": coarse, for lists. */
export function relative(ms: number, now = Date.now()): string {
  const diff = Math.round((ms - now) / 1000);
  const abs = Math.abs(diff);
  const [value, unit] =
    abs < 60 ? [abs, "s"] : abs < 3600 ? [Math.round(abs / 60), "min"] : abs < 86_400 ? [Math.round(abs / 3600), "h"] : [Math.round(abs / 86_400), "d"];
  return diff >= 0 ? `in ${value} ${unit}` : `${value} ${unit} ago`;
}

const UNLIMITED = 2_147_483_647;

export function count(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  if (n >= UNLIMITED) return "unlimited";
  return n.toLocaleString();
}

export function bytes(n: number): string {
  if (n >= UNLIMITED) return "unlimited";
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Text bodies as they are; bytes (base64 on the wire) as a hex dump of the first 4 KiB. */
export function hexDump(base64: string, limit = 4096): string {
  const binary = atob(base64);
  const lines: string[] = [];
  for (let offset = 0; offset < Math.min(binary.length, limit); offset += 16) {
    const chunk = binary.slice(offset, offset + 16);
    const hex = [...chunk].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join(" ");
    const text = [...chunk].map((c) => (c.charCodeAt(0) >= 32 && c.charCodeAt(0) < 127 ? c : ".")).join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${text}`);
  }
  if (binary.length > limit) lines.push(`… ${binary.length - limit} more bytes`);
  return lines.join("\n");
}

/** The text of base64 bytes when they are valid UTF-8; undefined for binary bytes. */
export function utf8Of(base64: string): string | undefined {
  const bin = atob(base64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
