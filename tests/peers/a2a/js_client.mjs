// The JavaScript SDK's client (@a2a-js/sdk 1.x) against an A2A agent, for tests/a2a_peers.rs.
//
//   node js_client.mjs <base url> <task text>
//
// Resolves the agent card, sends the text (returnImmediately), polls GetTask until the task
// ends (at most 60 s), and prints one JSON object: the card's name and skills, the final
// state, the artifact text and the status message text.
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';

const ENDED = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_INPUT_REQUIRED]);
const texts = (parts) => (parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value);

const [base, text] = process.argv.slice(2);
const client = await new ClientFactory().createFromUrl(base);
const card = await client.getAgentCard();
let result = await client.sendMessage({
  tenant: '',
  message: {
    messageId: 'js-client-1', contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined }],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  },
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
  metadata: undefined,
});
if (!('status' in result)) throw new Error(`expected a task, got ${JSON.stringify(result)}`);
const submitted = taskStateToJSON(result.status.state);
for (let i = 0; i < 600 && !ENDED.has(result.status?.state); i++) {
  await new Promise((r) => setTimeout(r, 100));
  result = await client.getTask({ tenant: '', id: result.id });
}
console.log(JSON.stringify({
  card: { name: card.name, skills: card.skills.map((s) => s.id) },
  submitted,
  state: taskStateToJSON(result.status.state),
  text: result.artifacts.flatMap((a) => texts(a.parts)).join('\n'),
  status: texts(result.status.message?.parts).join('\n'),
}));
