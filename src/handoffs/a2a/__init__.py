"""The Agent2Agent protocol (A2A), client side: a `RemoteAgent`'s card (`cards`) and the
call of one message (`client`), with the official `a2a-sdk` (the `a2a` extra). A team
served as an A2A agent is `handoffs.server.a2a`. Nothing here is imported by
`import handoffs`."""
