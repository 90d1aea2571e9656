/** A refused MCP administration step (`keel mcp`, Settings); the message says what to do. */
export class McpAdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpAdminError';
  }
}
