import { afterAll, beforeAll } from "vitest";
import { addCustomer, adminEnv } from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** What management.test.ts and management-search-and-start.test.ts share: their setup, hooks and helpers. */

export let server: TestServer;
export let receiver: Receiver;
export let accountId: string;
export let other: Awaited<ReturnType<typeof addCustomer>>;

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  receiver = await Receiver.start();
  accountId = server.ferry.bootstrap.account.id;
  other = await addCustomer(server, "other@test.local");
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

/** Every management route, with a real id of the admin's resources where it takes one. */
export function routes(searchId: string): [string, string, unknown?][] {
  return [
    ["GET", "/v2/msgsvc/user"],
    ["GET", "/v2/msgsvc/users"],
    ["GET", `/v2/msgsvc/user/${accountId}`],
    ["POST", `/v2/msgsvc/rotate-token/${accountId}`],
    ["POST", "/v2/msgsvc/user/rotatetoken"],
    ["POST", `/v2/msgsvc/set-plan/${accountId}`, { plan_name: "free" }],
    ["PATCH", `/v2/msgsvc/update-budget/${accountId}`, { budget: 50 }],
    ["POST", `/v2/msgsvc/enable-prodpack/${accountId}`],
    ["POST", `/v2/msgsvc/disable-prodpack/${accountId}`],
    ["GET", `/v2/msgsvc/stats/${accountId}`],
    ["GET", "/v2/msgsvc/stats"],
    ["POST", "/v2/search", { name: "x", region: "eu-west-1", type: "free" }],
    ["GET", "/v2/search"],
    ["GET", `/v2/search/${searchId}`],
    ["DELETE", `/v2/search/${searchId}`],
    ["POST", `/v2/search/${searchId}/rename`, { name: "y" }],
    ["POST", `/v2/search/${searchId}/reset-password`],
  ];
}
