import { useApp } from "../lib/app-context";
import { type useAction, type useConfirm, WriteButton } from "./ui";

/**
 * The row actions of a resource that can be paused (schedules, queues): Pause or Resume, and a Delete that asks
 * first. `path` is the resource's API path; pause and resume are POSTs below it, delete is a DELETE of it.
 */
export function PauseDeleteActions(props: {
  path: string;
  paused: boolean;
  /** The question the Delete button asks before it deletes. */
  deleteQuestion: string;
  action: ReturnType<typeof useAction>;
  confirm: ReturnType<typeof useConfirm>;
  reload: () => void;
}) {
  const { api } = useApp();
  const { path, paused, deleteQuestion, action, confirm, reload } = props;
  const remove = async () => {
    if (!(await confirm.ask(deleteQuestion, "Delete"))) return;
    await action.run(() => api.del(path), "Deleted", reload);
  };
  return (
    <>
      <WriteButton
        small
        disabled={action.busy}
        onClick={() =>
          void action.run(() => api.post(`${path}/${paused ? "resume" : "pause"}`), paused ? "Resumed" : "Paused", reload)
        }
      >
        {paused ? "Resume" : "Pause"}
      </WriteButton>
      <WriteButton small variant="danger" disabled={action.busy} onClick={() => void remove()}>
        Delete
      </WriteButton>
    </>
  );
}
