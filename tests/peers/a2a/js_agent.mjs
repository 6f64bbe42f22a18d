// An A2A agent written with the JavaScript SDK's server side (@a2a-js/sdk 1.x, Express),
// the peer toolnexus's outbound A2A tools call in tests/a2a_peers.rs.
//
//   node js_agent.mjs    → prints "listening <base url>", serves until killed
//
// Its one skill `echo` answers by the task text:
//   "fail…"  → the task fails with the status message "the JS agent failed on purpose"
//   "hang…"  → the task keeps working until cancelled; a CancelTask prints "CANCEL <task id>"
//   else     → completed, one artifact "js echo: <text>"
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined });
const agentMessage = (taskId, contextId, value) => ({
  messageId: crypto.randomUUID(), contextId, taskId, role: Role.ROLE_AGENT,
  parts: [text(value)], metadata: undefined, extensions: [], referenceTaskIds: [],
});
const status = (taskId, contextId, state, message) => AgentEvent.statusUpdate({
  taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined,
});

const hanging = new Map(); // task id → resolve()

class Executor {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const input = ctx.userMessage.parts
      .filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');
    bus.publish(AgentEvent.task({
      id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
      artifacts: [], history: [ctx.userMessage], metadata: undefined,
    }));
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, undefined));
    if (input.startsWith('fail')) {
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_FAILED,
        agentMessage(taskId, contextId, 'the JS agent failed on purpose')));
    } else if (input.startsWith('hang')) {
      await new Promise((resolve) => hanging.set(taskId, resolve));
      return; // cancelTask published the end state
    } else {
      bus.publish(AgentEvent.artifactUpdate({
        taskId, contextId, append: false, lastChunk: true, metadata: undefined,
        artifact: { artifactId: crypto.randomUUID(), name: '', description: '', parts: [text(`js echo: ${input}`)], metadata: undefined, extensions: [] },
      }));
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, undefined));
    }
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    console.log(`CANCEL ${taskId}`);
    bus.publish(status(taskId, '', TaskState.TASK_STATE_CANCELED, undefined));
    bus.finished();
    hanging.get(taskId)?.();
    hanging.delete(taskId);
  }
}

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: 'js echo agent', description: 'Echoes, fails or hangs on request', version: '1.0.0',
    supportedInterfaces: [{ url: `${base}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined, capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text'], defaultOutputModes: ['text'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the task', tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Executor());
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(`listening ${base}`);
});
