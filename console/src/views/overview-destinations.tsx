import { count } from "../lib/format";
import { href } from "../lib/router";
import type { AccountHealth } from "../lib/types";
import { Empty, Time } from "../components/ui";

/**
 * The destinations with failed attempts in the period, most failures first, each with its newest failure: the
 * delivery's own words (refused, timed out, TLS, or the status) and the start of the answer's body.
 */
export function DestinationFailures({
  destinations,
  period,
  delivered,
}: {
  destinations: AccountHealth["destinations"];
  period: string;
  /** Whether any message ended (delivered or failed) in the period. */
  delivered: boolean;
}) {
  if (destinations.length === 0) {
    return (
      <Empty title={`No failed attempts in the last ${period}`}>
        {delivered ? "Every attempt was answered with 2xx. " : "Nothing was delivered in this period. "}A destination
        that fails shows up here with its last error.
      </Empty>
    );
  }
  return (
    <div class="table-wrap">
      <table class="table destinations-table">
        <thead>
          <tr>
            <th>Destination</th>
            <th class="num">Failed attempts</th>
            <th class="num">To the DLQ</th>
            <th>Last error</th>
            <th>When</th>
          </tr>
        </thead>
        <tbody>
          {destinations.map((d) => (
            <tr key={d.url} data-destination={d.url}>
              <td class="cell-url" title={d.url}>
                {d.url}
              </td>
              <td class="num">{count(d.failedAttempts)}</td>
              <td class="num">{count(d.failedMessages)}</td>
              <td class="last-error">
                <div>
                  {d.lastError.status !== undefined && <span class="badge bad">{d.lastError.status}</span>}{" "}
                  <span class="error-text">{d.lastError.error}</span>
                </div>
                {d.lastError.bodyStart && (
                  <div class="mono small muted body-start" title={d.lastError.bodyStart}>
                    {d.lastError.bodyStart}
                  </div>
                )}
              </td>
              <td class="nowrap">
                <Time ms={d.lastError.time} />
                <div class="small">
                  <a href={href("messages", d.lastError.messageId)}>Its message</a>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
