"""The side app's routes, one module per area; each has `routes(state[, guard]) -> APIRouter`."""
