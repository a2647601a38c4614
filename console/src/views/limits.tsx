import { bytes, count } from "../lib/format";
import type { Limits } from "../lib/types";

/** The limits an operator looks for first, readable; the rest as the API names them. */
const SHOWN: [keyof Limits, string, (n: number) => string][] = [
  ["max_requests_per_day", "Requests per day", count],
  ["max_requests_per_second", "Requests per second", count],
  ["max_message_size", "Message size", bytes],
  ["max_retries", "Retries", count],
  ["max_delay", "Delay (seconds)", count],
  ["max_queues", "Queues", count],
  ["max_parallelism", "Queue parallelism", count],
  ["max_global_parallelism", "Global parallelism", count],
  ["max_topics", "URL groups", count],
  ["max_endpoints_per_topic", "Endpoints per URL group", count],
  ["max_schedules", "Schedules", count],
  ["max_dlq_size", "DLQ entries", count],
  ["retention", "Log retention (days)", count],
  ["timeout", "Delivery timeout (seconds)", count],
];

export function LimitsTable({ limits }: { limits: Limits }) {
  return (
    <div class="table-wrap">
      <table class="table compact limits">
        <tbody>
          {SHOWN.filter(([key]) => limits[key] !== undefined).map(([key, label, fmt]) => (
            <tr key={key}>
              <th scope="row">{label}</th>
              <td class="mono muted">{key}</td>
              <td class="num">{fmt(limits[key]!)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
