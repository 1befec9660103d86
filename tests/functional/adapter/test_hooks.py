"""dbt-tests-adapter's hooks suite: model, seed, snapshot and run hooks."""

from dbt.tests.adapter.hooks import test_model_hooks as model_hooks
from dbt.tests.adapter.hooks import test_run_hooks as run_hooks


class TestPrePostModelHooks(model_hooks.BasePrePostModelHooks):
    pass


class TestHookRefs(model_hooks.BaseHookRefs):
    pass


class TestPrePostModelHooksOnSeeds(model_hooks.BasePrePostModelHooksOnSeeds):
    pass


class TestHooksRefsOnSeeds(model_hooks.BaseHooksRefsOnSeeds):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixed(model_hooks.BasePrePostModelHooksOnSeedsPlusPrefixed):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixedWhitespace(
    model_hooks.BasePrePostModelHooksOnSeedsPlusPrefixedWhitespace
):
    pass


class TestPrePostModelHooksOnSnapshots(model_hooks.BasePrePostModelHooksOnSnapshots):
    pass


class TestPrePostModelHooksInConfig(model_hooks.BasePrePostModelHooksInConfig):
    pass


class TestPrePostModelHooksInConfigWithCount(model_hooks.BasePrePostModelHooksInConfigWithCount):
    pass


class TestPrePostModelHooksInConfigKwargs(model_hooks.BasePrePostModelHooksInConfigKwargs):
    pass


class TestPrePostSnapshotHooksInConfigKwargs(model_hooks.BasePrePostSnapshotHooksInConfigKwargs):
    pass


class TestDuplicateHooksInConfigs(model_hooks.BaseDuplicateHooksInConfigs):
    pass


class TestPrePostRunHooks(run_hooks.BasePrePostRunHooks):
    pass


class TestAfterRunHooks(run_hooks.BaseAfterRunHooks):
    pass
