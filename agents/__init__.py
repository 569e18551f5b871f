"""AutoGen lives here: model clients, the agent roles, teams, the SME/reviewer plug, the Memory adapter."""
