# The Function App on a Flex Consumption plan, Node.js 22, running as its user-assigned identity.
# App settings are exactly the ones shared/config/settings.ts reads (plus the host's own): storage is an
# identity-based connection (AzureWebJobsStorage__*), and telemetry goes to Application Insights with Entra authentication. No setting holds a secret.
# The Durable backend is host.json's Azure Storage unless durable_backend is DurableTaskScheduler, when
# AzureFunctionsJobHost__* settings override host.json's storageProvider (the host reads any host.json
# value from such a setting).

resource "azurerm_user_assigned_identity" "function" {
  name                = "${var.name_prefix}-func-id"
  resource_group_name = azurerm_resource_group.app.name
  location            = azurerm_resource_group.app.location
  tags                = local.tags
}

resource "azurerm_service_plan" "app" {
  name                = "${var.name_prefix}-func-${local.suffix}-plan"
  resource_group_name = azurerm_resource_group.app.name
  location            = azurerm_resource_group.app.location
  os_type             = "Linux"
  sku_name            = "FC1"
  tags                = local.tags
}

locals {
  # Every name is read by shared/config/settings.ts, host.json or the Functions host itself;
  # test/unit/infra-settings.test.ts checks that against loadSettings and the Bicep version.
  # APPLICATIONINSIGHTS_CONNECTION_STRING is set through site_config, as the provider requires.
  app_settings = {
    AzureWebJobsStorage__accountName          = azurerm_storage_account.app.name
    AzureWebJobsStorage__credential           = "managedidentity"
    AzureWebJobsStorage__clientId             = azurerm_user_assigned_identity.function.client_id
    AZURE_CLIENT_ID                           = azurerm_user_assigned_identity.function.client_id
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING = "ClientId=${azurerm_user_assigned_identity.function.client_id};Authorization=AAD"
    DURABLE_TASK_HUB                          = var.durable_task_hub_name
    CLUSTER_NAME                              = var.cluster_name
    AZURE_SUBSCRIPTION_ID                     = data.azurerm_subscription.current.subscription_id
    AZURE_NODE_RESOURCE_GROUP                 = var.node_resource_group_name
    LOCATION                                  = var.location
    VNET_SUBNET_ID                            = var.node_subnet_id
    ARM_ENDPOINT                              = var.arm_endpoint
    RETAIL_PRICES_ENDPOINT                    = var.retail_prices_endpoint
    LINUX_ADMIN_USERNAME                      = var.node_admin_username
    SSH_PUBLIC_KEY                            = var.node_ssh_public_key
    CLUSTER_ENDPOINT                          = local.kube_api_server_url
    KUBE_CA_CERT                              = var.kube_ca_cert
    KUBE_TOKEN_SCOPE                          = var.kube_token_scope
    BOOTSTRAP_API_SERVER_URL                  = var.bootstrap_api_server_url != "" ? var.bootstrap_api_server_url : local.kube_api_server_url
    BOOTSTRAP_CA_CERT                         = var.bootstrap_ca_cert != "" ? var.bootstrap_ca_cert : var.kube_ca_cert
    EVENTS_QUEUE_NAME                         = azurerm_storage_queue.events.name
    UNAVAILABLE_OFFERINGS_TABLE               = azurerm_storage_table.unavailable_offerings.name
    DECISION_RECORDS_TABLE                    = azurerm_storage_table.decision_records.name
    DECISION_RECORD_RETENTION_HOURS           = tostring(var.decision_record_retention_hours)
    SWEEP_SCHEDULE                            = var.sweep_schedule
    REGISTRATION_TIMEOUT_MINUTES              = tostring(var.registration_timeout_minutes)
    KUBERNETES_VERSION                        = local.cluster_inputs.kubernetes_version
    AKS_TENANT_ID                             = local.cluster_inputs.tenant_id
    NETWORK_PLUGIN                            = local.cluster_inputs.network_plugin
    NETWORK_PLUGIN_MODE                       = local.cluster_inputs.network_plugin_mode
    NETWORK_DATAPLANE                         = local.cluster_inputs.network_dataplane
    DNS_SERVICE_IP                            = local.cluster_inputs.dns_service_ip
    NODE_SECURITY_GROUP_ID                    = local.cluster_inputs.node_security_group_id
    ATTACH_NSG_TO_NIC                         = local.cluster_inputs.attach_nsg_to_nic
    KUBELET_IDENTITY_RESOURCE_ID              = local.cluster_inputs.kubelet_identity_resource_id
    KUBELET_IDENTITY_CLIENT_ID                = local.cluster_inputs.kubelet_identity_client_id
    LOAD_BALANCER_BACKEND_POOL_IDS            = local.cluster_inputs.load_balancer_backend_pool_ids
    CAPACITY_RESERVATION_GROUP_IDS            = join(",", var.capacity_reservation_group_ids)
    SYSTEM_NAMESPACE                          = var.bridge_service_account_namespace
    VNET_GUID                                 = var.vnet_guid
    VM_MEMORY_OVERHEAD_PERCENT                = tostring(var.vm_memory_overhead_percent)
    BUILD_COMMIT                              = var.build_commit
    LAUNCH_POLL_INTERVAL_SECONDS              = tostring(var.launch_poll_interval_seconds)
    LAUNCH_MAX_POLL_INTERVAL_SECONDS          = tostring(var.launch_max_poll_interval_seconds)
    LAUNCH_DEADLINE_MINUTES                   = tostring(var.launch_deadline_minutes)
    SKU_CACHE_SECONDS                         = tostring(var.sku_cache_seconds)
    NODE_IMAGE_CACHE_SECONDS                  = tostring(var.node_image_cache_seconds)
    EXPLAIN_AUDIENCE                          = var.explain_audience
    GC_SCHEDULE                               = var.gc_schedule
    REPLACEMENT_POLL_SECONDS                  = tostring(var.replacement_poll_seconds)
    REPLACEMENT_FALLBACK_SECONDS              = tostring(var.replacement_fallback_seconds)
    REPLACEMENT_TIMEOUT_MINUTES               = tostring(var.replacement_timeout_minutes)
    REPLACEMENT_BACKOFF_MINUTES               = tostring(var.replacement_backoff_minutes)
    DRAIN_POLL_SECONDS                        = tostring(var.drain_poll_seconds)
    ORPHAN_VM_GRACE_MINUTES                   = tostring(var.orphan_vm_grace_minutes)
    CONSOLIDATION_VALIDATION_SECONDS          = tostring(var.consolidation_validation_seconds)
    REQUEST_TIMEOUT_SECONDS                   = tostring(var.request_timeout_seconds)
    METRICS_PER_NODE                          = tostring(var.metrics_per_node)
    BATCH_IDLE_DURATION                       = var.batch_idle_duration
    BATCH_MAX_DURATION                        = var.batch_max_duration
    PROVISIONING_SELECTOR                     = var.provisioning_selector
    PREFERENCE_POLICY                         = var.preference_policy
    MIN_VALUES_POLICY                         = var.min_values_policy
    FEATURE_GATES                             = var.feature_gates
    REPAIR_POLICIES                           = var.repair_policies
    REPAIR_MAX_REBOOTS                        = tostring(var.repair_max_reboots)
    REPAIR_REBOOT_RECOVERY_SECONDS            = tostring(var.repair_reboot_recovery_seconds)
    PREEMPTION_DRAIN_SECONDS                  = tostring(var.preemption_drain_seconds)
    ROLLOUT_POLICY                            = var.rollout_policy
    ROLLOUT_CANARY                            = var.rollout_canary
    ROLLOUT_POLL_SECONDS                      = tostring(var.rollout_poll_seconds)
    ROLLOUT_SOAK_SECONDS                      = tostring(var.rollout_soak_seconds)
    ROLLOUT_INITIALIZED_WITHIN_SECONDS        = tostring(var.rollout_initialized_within_seconds)
    ROLLOUT_POD_READY_WITHIN_SECONDS          = tostring(var.rollout_pod_ready_within_seconds)
    ROLLOUT_MAX_POD_RESTARTS                  = tostring(var.rollout_max_pod_restarts)
  }
  # host.json's extensions.durableTask.storageProvider.partitionCount, as a deployment input (Azure
  # Storage's; the scheduler has no partitions to set).
  durable_partition_app_settings = {
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__partitionCount = tostring(var.durable_partition_count)
  }
  # With durable_backend = DurableTaskScheduler only: the provider type and the setting holding its
  # connection (https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-identity:
  # Endpoint, Authentication=ManagedIdentity and the user-assigned identity's ClientID; no key exists).
  # host.json's hubName (%DURABLE_TASK_HUB%) names the task hub for both backends.
  durable_task_scheduler_app_settings = {
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__type                 = "azureManaged"
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName = "DURABLE_TASK_SCHEDULER_CONNECTION_STRING"
    DURABLE_TASK_SCHEDULER_CONNECTION_STRING                                              = "Endpoint=${try(azapi_resource.durable_task_scheduler[0].output.properties.endpoint, "")};Authentication=ManagedIdentity;ClientID=${azurerm_user_assigned_identity.function.client_id}"
  }
  # The settings written: every one above, and the scheduler's only with that backend. (A for expression,
  # not a conditional: the two maps would have different attributes.)
  function_app_settings = merge(
    local.app_settings,
    local.durable_partition_app_settings,
    { for name, value in local.durable_task_scheduler_app_settings : name => value if local.durable_task_scheduler },
  )
}

resource "azurerm_function_app_flex_consumption" "app" {
  name                = "${var.name_prefix}-func-${local.suffix}"
  resource_group_name = azurerm_resource_group.app.name
  location            = azurerm_resource_group.app.location
  service_plan_id     = azurerm_service_plan.app.id
  https_only          = true

  identity {
    type         = "UserAssigned"
    identity_ids = [azurerm_user_assigned_identity.function.id]
  }

  storage_container_type            = "blobContainer"
  storage_container_endpoint        = "${azurerm_storage_account.app.primary_blob_endpoint}${azurerm_storage_container.deployment.name}"
  storage_authentication_type       = "UserAssignedIdentity"
  storage_user_assigned_identity_id = azurerm_user_assigned_identity.function.id

  # Flex Consumption takes the runtime here; FUNCTIONS_WORKER_RUNTIME is not an allowed app setting.
  runtime_name           = "node"
  runtime_version        = "22"
  maximum_instance_count = var.maximum_instance_count
  instance_memory_in_mb  = var.instance_memory_in_mb

  # Flex scales the queue trigger on its own ("function:<name>") and every durable function as one group;
  # an always-ready instance of each takes the first event without a cold start (docs/cost.md).
  dynamic "always_ready" {
    for_each = var.always_ready_queue_instances > 0 ? [1] : []
    content {
      name           = "function:objectEvents"
      instance_count = var.always_ready_queue_instances
    }
  }
  dynamic "always_ready" {
    for_each = var.always_ready_durable_instances > 0 ? [1] : []
    content {
      name           = "durable"
      instance_count = var.always_ready_durable_instances
    }
  }

  virtual_network_subnet_id = var.function_subnet_id != "" ? var.function_subnet_id : null

  site_config {
    minimum_tls_version                    = "1.2"
    application_insights_connection_string = azurerm_application_insights.app.connection_string
  }

  app_settings = local.function_app_settings
  tags         = local.tags

  # The settings are owned by azapi_resource_action.app_settings below (see there why).
  lifecycle {
    ignore_changes = [app_settings]
  }

  # Roles first, so the first instance can read its storage and cluster.
  depends_on = [
    azurerm_role_assignment.function_storage,
    azurerm_role_assignment.function_telemetry,
    azurerm_role_assignment.function_vm_operator,
    azurerm_role_assignment.function_compute_catalog_reader,
    azurerm_role_assignment.function_subnet_join,
    azurerm_role_assignment.function_durable_task_hub,
  ]
}

# A gap of the pinned azurerm version, closed through the ARM API directly: whatever
# storage_authentication_type says, the provider writes an AzureWebJobsStorage connection string with an
# empty account key. The host prefers that setting over the identity-based AzureWebJobsStorage__* ones
# and fails to reach its storage. A PUT of the appsettings resource replaces the whole set, so it removes
# that key; it runs again whenever the Function App resource changes (replace_triggered_by), because
# every provider update writes it back.
resource "azapi_resource_action" "app_settings" {
  type        = "Microsoft.Web/sites/config@2024-04-01"
  resource_id = "${azurerm_function_app_flex_consumption.app.id}/config/appsettings"
  method      = "PUT"
  body = {
    properties = merge(local.function_app_settings, {
      APPLICATIONINSIGHTS_CONNECTION_STRING = azurerm_application_insights.app.connection_string
    })
  }

  lifecycle {
    replace_triggered_by = [azurerm_function_app_flex_consumption.app]
  }
}
