import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { curlCommand } from "../lib/curl";
import { buildPublishRequest, emptyPublishForm, type PublishForm } from "../lib/publish-request";
import { href } from "../lib/router";
import { CopyButton, PageHead, useAction, WriteButton } from "../components/ui";
import { PublishFields } from "./publish-fields";

interface Published {
  messageId: string;
  url?: string;
  deduplicated?: boolean;
}

/** A request builder: every publish option, sent from here or copied as curl. */
export function Publish() {
  const { api, config } = useApp();
  const [form, setForm] = useState<PublishForm>(emptyPublishForm);
  const [results, setResults] = useState<Published[]>();
  const { run, busy } = useAction();
  const request = buildPublishRequest(form, config.headerPrefix);
  const curl = curlCommand(location.origin, request);

  const send = async (event: Event) => {
    event.preventDefault();
    await run(async () => {
      const answer = await api.post<Published | Published[]>(request.path, { headers: request.headers, body: request.body });
      setResults(Array.isArray(answer) ? answer : [answer]);
    }, "Published");
  };

  return (
    <>
      <PageHead title="Publish" sub="Build a message with every option the publish API takes, send it, or copy it as curl." />
      <div class="split">
        <form class="panel" onSubmit={(e) => void send(e)}>
          <PublishFields form={form} onChange={setForm} prefix={config.headerPrefix} />
          <div class="actions">
            <WriteButton type="submit" variant="primary" disabled={busy || form.destination.trim() === ""}>
              {busy ? "Sending…" : "Send"}
            </WriteButton>
          </div>
        </form>
        <div>
          <section class="panel">
            <div class="panel-head">
              <h2>curl</h2>
              <CopyButton text={curl} />
            </div>
            <pre class="code curl" data-testid="curl">
              {curl}
            </pre>
            <p class="field-hint">Set FERRY_TOKEN in your shell first; the token is never written into the command.</p>
          </section>
          {results && (
            <section class="panel" data-testid="publish-result">
              <h2>Sent</h2>
              <ul>
                {results.map((r) => (
                  <li key={r.messageId}>
                    <a class="id-link" href={href("messages", r.messageId)}>
                      {r.messageId}
                    </a>{" "}
                    {r.url && <span class="muted">→ {r.url}</span>} {r.deduplicated && <span class="badge muted">deduplicated</span>}
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
      </div>
    </>
  );
}
