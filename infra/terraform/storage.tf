# Host, Durable Functions, events queue, offerings table and deployment package. Shared keys are off:
# every client, this Terraform run included (storage_use_azuread), authenticates with Entra ID.

resource "azurerm_storage_account" "app" {
  name                            = local.storage_account_name
  resource_group_name             = azurerm_resource_group.app.name
  location                        = azurerm_resource_group.app.location
  account_kind                    = "StorageV2"
  account_tier                    = "Standard"
  account_replication_type        = "LRS"
  shared_access_key_enabled       = false
  default_to_oauth_authentication = true
  allow_nested_items_to_be_public = false
  min_tls_version                 = "TLS1_2"
  https_traffic_only_enabled      = true
  tags                            = local.tags
}

resource "azurerm_storage_container" "deployment" {
  name                  = "app-package"
  storage_account_id    = azurerm_storage_account.app.id
  container_access_type = "private"
}

# The bridge only sends, so the queue must exist before it starts.
resource "azurerm_storage_queue" "events" {
  name               = var.events_queue_name
  storage_account_id = azurerm_storage_account.app.id
}

# Created up front so the poison-queue alert and operators find it at once.
resource "azurerm_storage_queue" "events_poison" {
  name               = "${var.events_queue_name}-poison"
  storage_account_id = azurerm_storage_account.app.id
}

resource "azurerm_storage_table" "unavailable_offerings" {
  name               = var.unavailable_offerings_table_name
  storage_account_id = azurerm_storage_account.app.id
}

resource "azurerm_storage_table" "decision_records" {
  name               = var.decision_records_table_name
  storage_account_id = azurerm_storage_account.app.id
}
