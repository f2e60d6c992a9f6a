"""The business systems behind the lab's MCP servers: a log store, an order database, chart spaces."""
