import fs from 'node:fs';
import path from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { toolResultOfOneCall, useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// Issue 33: Keel's client asks for the newest MCP revision its SDK knows and still works with a server that
// answers 2025-11-25 (the promise, whatever the SDK's newest becomes) or an older revision it supports
// (negotiated down): a real stdio server in the box.
const fixture = useTurnHostFixture('keel-mcp-protocol-');

describe.runIf(process.platform === 'linux')('MCP protocol revisions', () => {
  it.each(['2025-11-25', '2025-06-18'])(
    'asks for the newest and works with a server answering %s',
    async (revision) => {
      // A copy in the project, so the box sees it wherever the checkout lies.
      const script = path.join(fixture.project, 'tools', 'plain.mjs');
      fs.mkdirSync(path.dirname(script), { recursive: true });
      fs.copyFileSync(path.resolve('test/fixtures/mcp/plainServer.mjs'), script);
      writeMcpSettings(fixture.home, {
        plain: { command: process.execPath, args: [script, `--protocol=${revision}`] },
      });
      const opened: SessionLog[] = [];
      try {
        const result = await toolResultOfOneCall(
          fixture,
          { id: 'c1', name: 'mcp__plain__echo', args: { text: 'hi' } },
          { PATH: process.env.PATH },
          opened,
        );
        expect(result.isError ?? false).toBe(false);
        expect(result.content).toBe(
          `echo: hi [client asked ${LATEST_PROTOCOL_VERSION}, server answered ${revision}]`,
        );
      } finally {
        for (const log of opened) log.close();
      }
    },
  );
});
