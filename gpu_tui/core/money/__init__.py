"""Money without I/O: hourly rates and totals per currency, the ledger's interval arithmetic."""
