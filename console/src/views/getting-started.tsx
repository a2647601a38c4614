import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { curlCommand } from "../lib/curl";
import { buildPublishRequest, emptyPublishForm } from "../lib/publish-request";
import { href } from "../lib/router";
import { CopyButton, Field } from "../components/ui";

/** Where the first message goes until the reader names an endpoint of theirs. */
const SAMPLE_DESTINATION = "https://example.com/webhook";

/**
 * An account with nothing yet: one publish as a curl command against this very server (its origin, the server's
 * dialect), built by the same code as the Publish view's, with the token read from `$FERRY_TOKEN`, never written in.
 */
export function GettingStarted() {
  const { config, readOnly } = useApp();
  const [destination, setDestination] = useState(SAMPLE_DESTINATION);
  const request = buildPublishRequest(
    { ...emptyPublishForm(), destination: destination.trim() || SAMPLE_DESTINATION, body: '{"hello":"world"}' },
    config.headerPrefix,
  );
  const command = curlCommand(location.origin, request);
  return (
    <section class="panel getting-started" data-testid="getting-started">
      <div class="panel-head">
        <h2>Send your first message</h2>
      </div>
      <p>
        Nothing has been published to this account yet. Ferry takes a message over HTTP, stores it, and delivers it to
        your endpoint with retries. Put your endpoint's URL here and run the command in a shell:
      </p>
      <Field label="Your endpoint" hint="Any http(s) URL that answers 2xx; Ferry POSTs the body to it." wide>
        <input
          name="first-destination"
          class="mono"
          value={destination}
          onInput={(e) => setDestination(e.currentTarget.value)}
        />
      </Field>
      <ol class="steps">
        <li>
          Set your token (Settings shows it{readOnly ? "; the read-only token you signed in with cannot publish" : ""}):
          <pre class="code curl">export FERRY_TOKEN=&lt;your token&gt;</pre>
        </li>
        <li>
          Publish:
          <pre class="code curl" data-testid="first-curl">
            {command}
          </pre>
          <CopyButton text={command} label="Copy command" />
        </li>
        <li>
          Watch it arrive in <a href={href("messages")}>Messages</a>; build other requests (delays, retries, queues,
          callbacks) in <a href={href("publish")}>Publish</a>.
        </li>
      </ol>
    </section>
  );
}
