"""The HTTP layer every online source shares: one retrying GET, politeness, deadlines, and knowing
there is no network."""
