# The fixture normcheck_check (normcheck/pytest_plugin.py), as a user's suite loads it.
pytest_plugins = ["normcheck.pytest_plugin"]
