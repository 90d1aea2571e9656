import { useEffect, useRef } from 'react';
import type { TopicName, TopicPayload } from '../../../main/ipc/contract.js';
import { keel } from './keel.js';

/** Calls the latest `handler` for every push of `topic` while the component is mounted. */
export function useSubscription<T extends TopicName>(
  topic: T,
  handler: (payload: TopicPayload<T>) => void,
): void {
  const handlerRef = useRef(handler);
  handlerRef.current = handler;
  useEffect(() => keel().subscribe(topic, (payload) => handlerRef.current(payload)), [topic]);
}
