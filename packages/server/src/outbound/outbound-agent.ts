/**
 * The undici agent behind every call the service makes: asset downloads and callbacks (through the guarded
 * dispatcher), and engines' calls to model servers and providers. Whatever a server answers, its reader's
 * backpressure never pauses undici's parser (`unpaused-parser.ts`).
 */
import { Agent, type Dispatcher } from 'undici';
import { unpausedParser } from './unpaused-parser.js';

export function createOutboundAgent(options: Agent.Options = {}): Dispatcher {
  return new Agent(options).compose(unpausedParser());
}
