"""The structured dtype real_world_constructs_9.py imports, as a terrain-erosion package keeps its state layout in a
module of its own (`from .defaults import ErosionStateDataDtype`)."""
import numpy as np

State = np.dtype([("soil", np.float32), ("water", np.float32), ("speed", np.float64)])
