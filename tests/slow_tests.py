"""The tests `make test-fast` leaves out (marked `slow` by conftest.py): those that start Julia,
TF servers, a notebook kernel, a browser, a wheel build, an example script or another fresh
Python process.

What stays is every module's core behaviour in one process: values, devices, reports, refusals.
`make test` runs everything; its `--durations` list shows what to add here when the fast tier
grows past its budget (README, "Tests").
"""

#: Modules all of whose tests are slow.
SLOW_MODULES = {
    "test_adcme_interrupt.py",  # Julia
    "test_adcme_upstream.py",  # Julia
    "test_autoplace_servers.py",  # TF servers
    "test_bridge_robustness.py",  # Julia processes started, interrupted, killed
    "test_cluster_checkpoint.py",  # clusters
    "test_cluster_cli.py",
    "test_cluster_example.py",
    "test_cluster_failures.py",
    "test_cluster_hosts.py",
    "test_cluster_placement.py",
    "test_docs_blocks.py",  # every page's blocks, Julia's included
    "test_examples_julia.py",
    "test_examples_python.py",  # each example script in its own process
    "test_notebooks.py",
    "test_packaging.py",  # builds the wheel
    "test_quiet_console.py",  # a fresh process (Python or Julia) per test
    "test_remote_sessions.py",  # TF servers
    "test_servers_benchmark.py",
}

#: Single slow tests of modules whose other tests are fast, by module and function name.
SLOW_TESTS = {
    "test_autoplace_cost.py": {
        "test_verify_gpu_script_runs_without_a_gpu_too",
        "test_fidelity_script_reports_the_summary_on_the_shared_data",
    },
    "test_bridge_julia.py": {"test_devplace_jl_suite"},
    "test_cli.py": {
        "test_console_script_runs",
        "test_full_verbosity_child_reports_the_missing_driver",
    },
    "test_cluster_cores.py": {
        "test_each_server_runs_only_on_its_own_cores_and_computes",
        "test_cluster_up_cores_per_task_pins_each_server",
        "test_cluster_up_refuses_too_many_cores_at_once",
    },
    "test_cluster_launcher.py": {
        "test_a_start_past_its_deadline_names_the_servers_and_leaves_nothing",
        "test_nothing_outlives_a_killed_owner_even_a_stopped_server",
        "test_without_a_namespace_it_warns_once_and_isolate_true_refuses",
        "test_open_sessions_never_hold_the_interpreter_when_the_cluster_is_gone",
    },
    "test_cluster_serve.py": {
        "test_serve_on_loopback_pins_answers_and_stops_cleanly",
        "test_cluster_wait_names_the_tasks_that_do_not_answer",
        "test_serve_wait_names_the_tasks_that_never_answer_and_stops",
    },
    "test_rich_display.py": {"test_local_cluster_html_lists_tasks_and_addresses"},
    "test_session.py": {
        "test_gpu_memory_options_a_later_session_cannot_get_warn_once_naming_both",
        "test_tf_force_gpu_allow_growth_overrides_allow_growth_and_the_warning_says_so",
    },
    "test_tensorboard.py": {"test_graphs_dashboard_renders_in_headless_chromium"},
    "test_tf1_programs.py": {"test_tf_keras_loads_on_first_touch_and_leaves_tf_keras_alone"},
    "test_tf_mode.py": {
        "test_eager_code_run_before_the_switch_gets_a_warning",
        "test_import_prints_no_load_noise",
        "test_the_eager_code_warning_points_at_the_users_line",
    },
    "test_virtual_gpus.py": {"test_a_later_different_request_warns_once_naming_both"},
}


def is_slow(module: str, function: str) -> bool:
    """Whether test `function` of `module` (a file name such as `test_api.py`) is slow."""
    return module in SLOW_MODULES or function in SLOW_TESTS.get(module, ())
