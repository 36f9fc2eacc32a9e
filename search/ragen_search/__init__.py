"""Model-based sweep search (TPE) for the sweep workflow: Optuna studies behind Temporal activities."""
