/*
 * A tiny llama-architecture GGUF (~2 MB, one block) whose behaviour is known in advance, so tests of the local
 * provider can assert exact text and a real tool call without a real model.
 *
 * The tokenizer is SentencePiece-style ("llama"): <unk> <s> </s>, the 256 byte-fallback tokens, "▁" and the 94
 * printable ASCII characters, ChatML's <|im_start|> / <|im_end|> (control tokens; <|im_end|> is end-of-generation)
 * and two user-defined tokens, "||call:" and "||result:" (node-llama-cpp's generic function-call syntax, which its
 * ChatML wrapper uses), so every text tokenizes and the call markers are single tokens.
 *
 * The weights are random noise around a designed core: token embeddings are one-hot, the block's attention and
 * feed-forward outputs are (nearly) zero, so the logits depend on the current token alone (a bigram model) —
 * except one feature: the value of the "||result:" token, averaged by near-uniform attention and amplified, marks
 * "a tool result is in context" and vetoes "||call:". Greedy decoding therefore gives:
 *
 * - after the assistant header ("\n"), with no tool result in context: `||call:` then ` "a"a"a…` forever (a long
 *   generation for cancellation and speed); with functions offered, node-llama-cpp sees the call marker and its
 *   grammar forces a well-formed call (name from the list, params valid for the schema; strings come out "a");
 * - after a tool result ("\n" with the feature set): `Done.` then <|im_end|>.
 */
import { GgmlType, f32, f32s, i32s, str, strings, u32, writeGguf, type GgufTensor } from './gguf.js';

export const TINY_CHAT_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** What the model says after a tool result. */
export const TINY_ANSWER = 'Done.';

const TOKEN = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, BYTE: 6 } as const;

type Vocab = { tokens: string[]; types: number[]; id: (piece: string) => number };

function vocab(): Vocab {
  const tokens: string[] = ['<unk>', '<s>', '</s>'];
  const types: number[] = [TOKEN.UNKNOWN, TOKEN.CONTROL, TOKEN.CONTROL];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TOKEN.BYTE);
  }
  tokens.push('▁');
  types.push(TOKEN.NORMAL);
  for (let c = 33; c < 127; c++) {
    tokens.push(String.fromCharCode(c));
    types.push(TOKEN.NORMAL);
  }
  for (const t of ['<|im_start|>', '<|im_end|>']) {
    tokens.push(t);
    types.push(TOKEN.CONTROL);
  }
  for (const t of ['||call:', '||result:']) {
    tokens.push(t);
    types.push(TOKEN.USER_DEFINED);
  }
  const index = new Map(tokens.map((t, i) => [t, i]));
  return {
    tokens,
    types,
    id: (piece) => {
      const i = index.get(piece);
      if (i === undefined) throw new Error(`no token ${piece}`);
      return i;
    },
  };
}

/** mulberry32: the same "random" weights on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

function noise(n: number, scale: number, rand: () => number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rand() * 2 * scale;
  return out;
}

export type TinyModelOptions = { contextLength?: number; name?: string };

export function writeTinyModel(file: string, options: TinyModelOptions = {}): void {
  const v = vocab();
  const nVocab = v.tokens.length;
  const nEmbd = 384; // > nVocab: one-hot embeddings plus the "result seen" feature
  const feature = nEmbd - 1;
  const nHead = 4;
  const headDim = nEmbd / nHead;
  const nFf = 32;
  const rand = rng(34);

  const embd = new Float32Array(nEmbd * nVocab);
  for (let t = 0; t < nVocab; t++) embd[t * nEmbd + t] = 1;

  // output.weight: row j (ne0 = nEmbd values) scores token j; column t is the current token.
  const out = noise(nEmbd * nVocab, 0.25, rand);
  for (let j = 0; j < nVocab; j++) out[j * nEmbd + feature] = 0;
  const prefer = (from: string, to: string, logit: number): void => {
    out[v.id(to) * nEmbd + v.id(from)] = logit;
  };
  // Every printable character is followed by a quote, a quote by "a": `"a"a"a…`, and inside a JSON string the
  // grammar's only allowed continuations make it "a".
  for (let c = 33; c < 127; c++) if (c !== 34) prefer(String.fromCharCode(c), '"', 10);
  prefer('▁', '"', 10);
  // Second choices, for where the grammar forbids the first: close an object or array rather than go on, so a
  // call's arguments end soon (an array of "a", or a number's digits, would otherwise run to the output limit).
  for (let c = 33; c < 127; c++) {
    const from = String.fromCharCode(c);
    if (from !== '}') prefer(from, '}', 6);
    if (from !== ']') prefer(from, ']', 5);
    if (from !== ',') prefer(from, ',', 4);
  }
  prefer('"', 'a', 10);
  const newline = '<0x0A>';
  prefer(newline, '||call:', 10);
  prefer('||call:', '▁', 10);
  out[v.id('||call:') * nEmbd + feature] = -200;
  const answer = [newline, ...TINY_ANSWER.split(''), '<|im_end|>'];
  for (let i = 0; i + 1 < answer.length; i++) {
    // The answer's letters lose the default quote: their next letter is their only first choice.
    if (i > 0) prefer(answer[i]!, '"', 0);
    prefer(answer[i]!, answer[i + 1]!, i === 0 ? 9 : 10);
  }

  // Attention: queries and keys are small noise (near-uniform attention); the value of "||result:" lands on one
  // value dimension of head 0 and the output projection amplifies it into the feature.
  const q = noise(nEmbd * nEmbd, 0.01, rand);
  const k = noise(nEmbd * nEmbd, 0.01, rand);
  const vw = new Float32Array(nEmbd * nEmbd);
  vw[0 * nEmbd + v.id('||result:')] = 1; // value dim 0 (row 0) reads the result token's dimension
  const o = new Float32Array(nEmbd * nEmbd);
  o[feature * nEmbd + 0] = 2000;

  const ones = new Float32Array(nEmbd).fill(1);
  const F16 = GgmlType.F16;
  const F32 = GgmlType.F32;
  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dims: [nEmbd, nVocab], type: F16, data: embd },
    { name: 'output_norm.weight', dims: [nEmbd], type: F32, data: ones },
    { name: 'output.weight', dims: [nEmbd, nVocab], type: F16, data: out },
    { name: 'blk.0.attn_norm.weight', dims: [nEmbd], type: F32, data: ones },
    { name: 'blk.0.attn_q.weight', dims: [nEmbd, nEmbd], type: F16, data: q },
    { name: 'blk.0.attn_k.weight', dims: [nEmbd, nEmbd], type: F16, data: k },
    { name: 'blk.0.attn_v.weight', dims: [nEmbd, nEmbd], type: F16, data: vw },
    { name: 'blk.0.attn_output.weight', dims: [nEmbd, nEmbd], type: F16, data: o },
    { name: 'blk.0.ffn_norm.weight', dims: [nEmbd], type: F32, data: ones },
    { name: 'blk.0.ffn_gate.weight', dims: [nEmbd, nFf], type: F16, data: noise(nEmbd * nFf, 0.02, rand) },
    { name: 'blk.0.ffn_up.weight', dims: [nEmbd, nFf], type: F16, data: noise(nEmbd * nFf, 0.02, rand) },
    { name: 'blk.0.ffn_down.weight', dims: [nFf, nEmbd], type: F16, data: noise(nFf * nEmbd, 0.001, rand) },
  ];

  writeGguf(
    file,
    {
      'general.architecture': str('llama'),
      'general.name': str(options.name ?? 'keel-tiny'),
      'general.alignment': u32(32),
      'llama.context_length': u32(options.contextLength ?? 8192),
      'llama.embedding_length': u32(nEmbd),
      'llama.block_count': u32(1),
      'llama.feed_forward_length': u32(nFf),
      'llama.attention.head_count': u32(nHead),
      'llama.attention.head_count_kv': u32(nHead),
      'llama.rope.dimension_count': u32(headDim),
      'llama.rope.freq_base': f32(10000),
      'llama.attention.layer_norm_rms_epsilon': f32(1e-5),
      'llama.vocab_size': u32(nVocab),
      'tokenizer.ggml.model': str('llama'),
      'tokenizer.ggml.tokens': strings(v.tokens),
      'tokenizer.ggml.scores': f32s(v.tokens.map(() => 0)),
      'tokenizer.ggml.token_type': i32s(v.types),
      'tokenizer.ggml.bos_token_id': u32(v.id('<s>')),
      'tokenizer.ggml.eos_token_id': u32(v.id('<|im_end|>')),
      'tokenizer.ggml.unknown_token_id': u32(v.id('<unk>')),
      'tokenizer.ggml.add_bos_token': { type: 7, value: true },
      'tokenizer.ggml.add_eos_token': { type: 7, value: false },
      // No "▁" before each text piece: text after a special token re-tokenizes as it was generated.
      'tokenizer.ggml.add_space_prefix': { type: 7, value: false },
      'tokenizer.chat_template': str(TINY_CHAT_TEMPLATE),
    },
    tensors,
  );
}
