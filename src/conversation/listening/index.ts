/**
 * The listening side of a conversation: `createListener(recognizer, events, options)` gives one
 * session's listener (see listener.ts for how audio flows through it).
 */
import type { Recognizer } from '../../speech/recognition/types.js';
import { VisitorListener, type ListenerOptions } from './listener.js';
import type { Listener, ListenerEvents } from './types.js';

export type { Listener, ListenerEvents, VisitorTurnHeard, TentativeTurn, AgentPlayback } from './types.js';
export type { ListenerOptions } from './listener.js';
export { VisitorListener } from './listener.js';

export function createListener(recognizer: Recognizer, events: ListenerEvents, options: ListenerOptions = {}): Listener {
  return new VisitorListener(recognizer, events, options);
}
