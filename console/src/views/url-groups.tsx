import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import type { Topic } from "../lib/types";
import { useAsync } from "../lib/use-async";
import {
  Button,
  Dialog,
  Empty,
  Field,
  ListStatus,
  PageHead,
  Time,
  useAction,
  useConfirm,
  WriteButton,
} from "../components/ui";

type Editor =
  | { kind: "endpoint"; group: string; isNewGroup: boolean; url: string; name: string; rename: boolean }
  | { kind: "headers"; group: string; text: string };

/** `Name: value` lines to the API's `{"Name": ["value", ...]}`. */
export function parseHeaderLines(text: string): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (const line of text.split("\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (!name) continue;
    (headers[name] ??= []).push(value);
  }
  return headers;
}

export function headerLines(headers: Record<string, string[]> | undefined): string {
  return Object.entries(headers ?? {})
    .flatMap(([name, values]) => values.map((v) => `${name}: ${v}`))
    .join("\n");
}

export function UrlGroups() {
  const { api } = useApp();
  const { run, busy } = useAction();
  const confirm = useConfirm();
  const list = useAsync(() => api.get<Topic[]>("/v2/topics"), [api]);
  const [editor, setEditor] = useState<Editor>();
  const reload = () => list.reload(true);

  const save = async (e: Event) => {
    e.preventDefault();
    if (!editor) return;
    const path = `/v2/topics/${enc(editor.group.trim())}`;
    const ok =
      editor.kind === "headers"
        ? await run(() => api.request("PATCH", path, { body: { headers: parseHeaderLines(editor.text) } }), "Default headers saved", reload)
        : await run(
            () =>
              api.post(`${path}/endpoints`, {
                body: { endpoints: [editor.name.trim() ? { url: editor.url.trim(), name: editor.name.trim() } : { url: editor.url.trim() }] },
              }),
            editor.rename ? "Endpoint renamed" : "Endpoint added",
            reload,
          );
    if (ok) setEditor(undefined);
  };

  const removeEndpoint = async (group: string, url: string) => {
    if (!(await confirm.ask(`Remove ${url} from ${group}? Removing the last endpoint deletes the group.`, "Remove"))) return;
    await run(() => api.del(`/v2/topics/${enc(group)}/endpoints`, { body: { endpoints: [{ url }] } }), "Endpoint removed", reload);
  };

  return (
    <>
      {confirm.dialog}
      <PageHead title="URL groups" sub="Publish once to a group's name; every endpoint gets its own message.">
        <WriteButton
          variant="primary"
          onClick={() => setEditor({ kind: "endpoint", group: "", isNewGroup: true, url: "", name: "", rename: false })}
        >
          New URL group
        </WriteButton>
      </PageHead>
      <ListStatus
        state={list}
        count={list.data?.length ?? 0}
        empty={
          <section class="panel">
            <Empty title="No URL groups yet">Create one with “New URL group”: a name and its first endpoint.</Empty>
          </section>
        }
      />
      {(list.data ?? []).map((t) => (
        <section key={t.name} class="panel" data-group={t.name}>
          <div class="panel-head">
            <div>
              <h2 class="mono">{t.name}</h2>
              <span class="muted small">
                {t.endpoints.length} endpoint{t.endpoints.length === 1 ? "" : "s"} · updated <Time ms={t.updatedAt} />
              </span>
            </div>
            <div class="row-actions">
              <WriteButton
                small
                onClick={() => setEditor({ kind: "endpoint", group: t.name, isNewGroup: false, url: "", name: "", rename: false })}
              >
                Add endpoint
              </WriteButton>
              <WriteButton small onClick={() => setEditor({ kind: "headers", group: t.name, text: headerLines(t.headers) })}>
                Default headers
              </WriteButton>
              <WriteButton
                small
                variant="danger"
                disabled={busy}
                onClick={() =>
                  void (async () => {
                    if (!(await confirm.ask(`Delete URL group ${t.name}?`, "Delete"))) return;
                    await run(() => api.del(`/v2/topics/${enc(t.name)}`), "Deleted", reload);
                  })()
                }
              >
                Delete group
              </WriteButton>
            </div>
          </div>
          <div class="table-wrap">
            <table class="table compact">
              <thead>
                <tr>
                  <th>Endpoint name</th>
                  <th>URL</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {t.endpoints.map((ep) => (
                  <tr key={ep.url} data-endpoint={ep.url}>
                    <td>{ep.name ?? <span class="muted">unnamed</span>}</td>
                    <td class="mono break">{ep.url}</td>
                    <td>
                      <div class="row-actions">
                        <WriteButton
                          small
                          variant="ghost"
                          onClick={() =>
                            setEditor({ kind: "endpoint", group: t.name, isNewGroup: false, url: ep.url, name: ep.name ?? "", rename: true })
                          }
                        >
                          Rename
                        </WriteButton>
                        <WriteButton small variant="danger" disabled={busy} onClick={() => void removeEndpoint(t.name, ep.url)}>
                          Remove
                        </WriteButton>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {t.headers && (
            <>
              <h3>Default headers</h3>
              <pre class="code">{headerLines(t.headers)}</pre>
            </>
          )}
        </section>
      ))}
      <Dialog
        title={
          !editor
            ? ""
            : editor.kind === "headers"
              ? `Default headers of ${editor.group}`
              : editor.isNewGroup
                ? "New URL group"
                : editor.rename
                  ? "Rename endpoint"
                  : `Add an endpoint to ${editor.group}`
        }
        open={editor !== undefined}
        onClose={() => setEditor(undefined)}
      >
        {editor && (
          <form class="form" onSubmit={(e) => void save(e)}>
            {editor.kind === "headers" ? (
              <Field label="Headers" hint="One “Name: value” a line. They replace the current set; empty clears it.">
                <textarea name="headers" value={editor.text} onInput={(e) => setEditor({ ...editor, text: e.currentTarget.value })} />
              </Field>
            ) : (
              <>
                {editor.isNewGroup && (
                  <Field label="Group name" hint="Letters, digits, -, _ and .">
                    <input name="group" required value={editor.group} onInput={(e) => setEditor({ ...editor, group: e.currentTarget.value })} />
                  </Field>
                )}
                <Field label="Endpoint URL">
                  <input
                    name="url"
                    required
                    readOnly={editor.rename}
                    value={editor.url}
                    onInput={(e) => setEditor({ ...editor, url: e.currentTarget.value })}
                  />
                </Field>
                <Field label="Endpoint name" hint="Optional; unique in the group.">
                  <input name="endpointName" value={editor.name} onInput={(e) => setEditor({ ...editor, name: e.currentTarget.value })} />
                </Field>
              </>
            )}
            <div class="actions">
              <Button onClick={() => setEditor(undefined)}>Cancel</Button>
              <Button type="submit" variant="primary" disabled={busy}>
                Save
              </Button>
            </div>
          </form>
        )}
      </Dialog>
    </>
  );
}
