"""The program's numbers, before any model: the problem of one ledger, the value curves, the
scenarios, the periods, the infrastructure that may be chosen, and each curve's bounds."""
