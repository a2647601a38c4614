/**
 * Remembers the results of a pure function of a string, up to `kept` of them; past that it forgets them all and
 * starts over, so inputs that come from outside (header names, URLs) cannot grow it without bound. On the hot path
 * the same few inputs repeat for every message (a destination's URL, the same header names), and a remembered
 * string is also one V8 has already hashed when it is used as a property key.
 */
export function boundedMemo<T>(compute: (input: string) => T, kept = 1000): (input: string) => T {
  const results = new Map<string, T>();
  return (input) => {
    let result = results.get(input);
    if (result === undefined && !results.has(input)) {
      result = compute(input);
      if (results.size >= kept) results.clear();
      results.set(input, result);
    }
    return result as T;
  };
}
