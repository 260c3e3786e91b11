terraform {
  required_version = ">= 1.11"

  required_providers {
    azurerm = {
      source = "hashicorp/azurerm"
      # 4.x: azurerm_function_app_flex_consumption, storage resources by storage_account_id.
      # Pinned: test/unit/infra-terraform-schema.test.ts checks every argument against this version's
      # documented schema (test/fixtures/terraform-provider-schemas.json).
      version = "4.81.0"
    }
    azapi = {
      source = "Azure/azapi"
      # For the two settings azurerm_function_app_flex_consumption gets wrong (function_app.tf).
      version = "2.12.0"
    }
  }
}

provider "azurerm" {
  # azurerm 4.x needs a subscription: this variable, or ARM_SUBSCRIPTION_ID in the environment when it
  # is left null.
  subscription_id = var.subscription_id
  features {
    storage {
      # Shared keys are disabled on the storage account, and the identity running Terraform holds no
      # storage data role: the storage account, container, queues and table are then managed through
      # ARM only, without the data-plane reads the provider would otherwise make after creating them.
      data_plane_available = false
    }
  }
  # Any storage call that still reaches the data plane authenticates with Entra ID, never a key.
  storage_use_azuread = true
}
