"""The planner's engine (numpy): model configurations, KV-cache memory, serving time, calibration on published
measurements, and the deployment plan built from them."""
