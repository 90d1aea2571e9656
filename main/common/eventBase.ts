import { z } from 'zod';

/** The fields every event has: its place in the log (seq, from 1) and when it was appended. Shared by the files
 * that hold a group of event kinds (events.ts imports them all into its union). */
const seq = z.number().int().positive();
export const eventBase = { seq, base: { seq, at: z.string().min(1) } };
