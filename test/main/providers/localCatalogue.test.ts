import { describe, expect, it } from 'vitest';
import {
  LOCAL_CATALOGUE,
  localModelsDir,
  resolveModelSource,
  suggestedLocalModel,
  suggestLocalModel,
  type MachineMemory,
} from '../../../main/providers/local/catalogue.js';

const GB = 1024 ** 3;

describe('the local model catalogue', () => {
  it('has a model for 8, 16 and 32 GB machines, each with license and https source', () => {
    expect(LOCAL_CATALOGUE.map((e) => e.minMemoryGb)).toEqual([8, 16, 32]);
    for (const entry of LOCAL_CATALOGUE) {
      expect(entry.license).not.toBe('');
      expect(entry.url).toMatch(/^https:\/\/huggingface\.co\/.+\.gguf$/);
    }
  });

  it('suggests the largest model the memory fits', () => {
    expect(suggestedLocalModel(8 * GB).minMemoryGb).toBe(8);
    expect(suggestedLocalModel(16 * GB).minMemoryGb).toBe(16);
    expect(suggestedLocalModel(64 * GB).minMemoryGb).toBe(32);
    expect(suggestedLocalModel(4 * GB).minMemoryGb).toBe(8);
  });

  it('on a discrete GPU suggests the largest model its VRAM holds; else, or when none fits, the memory decides', () => {
    const machine: MachineMemory = { ramBytes: 32 * GB, gpu: 'cuda', vramBytes: 0, unifiedBytes: 0 };
    const pick = (over: Partial<MachineMemory>) => suggestLocalModel({ ...machine, ...over });
    expect(pick({ vramBytes: 8 * GB }).entry.id).toBe('qwen2.5-coder-7b');
    expect(pick({ vramBytes: 8 * GB }).why).toBe('cuda with 8.0 GB of VRAM');
    expect(pick({ vramBytes: 24 * GB }).entry.id).toBe('qwen2.5-coder-32b');
    expect(pick({ vramBytes: 4 * GB }).entry.id).toBe('qwen2.5-coder-3b');
    // Nothing fits 2 GB of VRAM: 32 GB of memory run the largest on the CPU.
    expect(pick({ vramBytes: 2 * GB }).entry.id).toBe('qwen2.5-coder-32b');
    expect(pick({ vramBytes: 2 * GB }).why).toMatch(
      /too little for any of these: 32\.0 GB of memory decides/,
    );
    // Apple silicon: the GPU shares the memory, which decides; no GPU at all: the memory too.
    expect(
      pick({ gpu: 'metal', ramBytes: 16 * GB, vramBytes: 12 * GB, unifiedBytes: 12 * GB }).entry.id,
    ).toBe('qwen2.5-coder-7b');
    expect(pick({ gpu: false, ramBytes: 8 * GB }).entry.id).toBe('qwen2.5-coder-3b');
    expect(pick({ gpu: false, ramBytes: 8 * GB }).why).toBe('CPU only, 8.0 GB of memory');
  });

  it('resolves catalogue ids, hf: URIs and https URLs; not other text', () => {
    expect(resolveModelSource('qwen2.5-coder-7b')?.fileName).toBe('Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf');
    expect(resolveModelSource('hf:owner/repo/sub/model-Q4.gguf')).toEqual({
      url: 'https://huggingface.co/owner/repo/resolve/main/sub/model-Q4.gguf',
      fileName: 'model-Q4.gguf',
    });
    expect(resolveModelSource('hf:owner/repo@v2/model.gguf')?.url).toBe(
      'https://huggingface.co/owner/repo/resolve/v2/model.gguf',
    );
    expect(resolveModelSource('https://example.com/x/model.gguf')?.fileName).toBe('model.gguf');
    expect(resolveModelSource('http://example.com/model.gguf')).toBeUndefined();
    expect(resolveModelSource('hf:owner/model.gguf')).toBeUndefined();
    expect(localModelsDir('/home/k')).toBe('/home/k/models');
  });
});
